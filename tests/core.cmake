# Unit tests of the planner core (no MPI):
#  - test_core: each module on hand-computed cases (downsets, stage cost,
#    knapsack, staircase tables, DP, plan checker);
#  - test_bruteforce: the DP against an exhaustive search over every plan of
#    small random graphs.
piper_unit_test(test_core test_core.c)
piper_unit_test(test_bruteforce test_bruteforce.c)
