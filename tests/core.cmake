# Unit tests of the planner core (no MPI):
#  - one test per module on hand-computed cases, each linking piper_core
#    alone: test_downsets, test_stage (stage cost), test_knapsack,
#    test_table (staircase tables), test_dp, test_check (plan checker);
#  - test_bruteforce: the DP against an exhaustive search over every plan of
#    small random graphs;
#  - test_bruteforce_sched: the same under --schedule 1f1b/gpipe and
#    --uniform (the Pareto-row DP, and its tables split in k and joined);
#  - test_parity: every row of the reference optima (shared/reference/
#    expected.tsv) through the library API.  PIPER_SKIP_SLOW=1 in the
#    environment skips the rows whose reference time exceeds 100 s (GNMT).
foreach(m downsets stage knapsack table dp check shorthand)
  piper_unit_test(test_${m} piper_core test_${m}.c)
endforeach()
piper_unit_test(test_bruteforce piper_core test_bruteforce.c)
piper_unit_test(test_bruteforce_sched piper_core test_bruteforce_sched.c)
piper_unit_test(test_parity piper_core test_parity.c REQUIRES -f ${PIPER_SHARED_DIR}/reference/expected.tsv)
set_tests_properties(test_parity PROPERTIES TIMEOUT 3600)
# The equi baseline against an exhaustive search over its candidates and the DP.
piper_unit_test(test_equi piper_core test_equi.c)
# The pure parts of the layer driver: work split, table packing, install,
# and the driver with several simulated participants.
piper_unit_test(test_layer piper_core test_layer.c)
# pp_dp_restrict (sweep's per-row tables) against a DP at the row's budget, 2bw and Pareto rows.
piper_unit_test(test_restrict piper_core test_restrict.c)
# The sweep kernel (forced on) against the other 2bw kernels, every table of small DAGs.
piper_unit_test(test_wide piper_core test_wide.c)
# The dense 2bw kernel against the small-block one, in k-range parts, every table of small DAGs.
piper_unit_test(test_dense piper_core test_dense.c)
# The screens and the k-range split against the plain kernels, every table of DAGs with many downsets.
piper_unit_test(test_screens piper_core test_screens.c)
# The Pareto rows that hold only what they add, and the whole rows of the k-range seams (keyframes).
piper_unit_test(test_front_rows piper_core test_front_rows.c)
