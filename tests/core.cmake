# Unit tests of the planner core (no MPI):
#  - test_core: each module on hand-computed cases (downsets, stage cost,
#    knapsack, staircase tables, DP, plan checker);
#  - test_bruteforce: the DP against an exhaustive search over every plan of
#    small random graphs;
#  - test_parity: every row of the reference optima (shared/reference/
#    expected.tsv) through the library API.  PIPER_SKIP_SLOW=1 in the
#    environment skips the rows whose reference time exceeds 100 s (GNMT).
piper_unit_test(test_core piper_core test_core.c)
piper_unit_test(test_bruteforce piper_core test_bruteforce.c)
piper_unit_test(test_parity piper_core test_parity.c REQUIRES -f ${PIPER_SHARED_DIR}/reference/expected.tsv)
set_tests_properties(test_parity PROPERTIES TIMEOUT 3600)
