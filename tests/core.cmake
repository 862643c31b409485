# Unit tests of the planner core (no MPI):
#  - test_core: each module on hand-computed cases (downsets, stage cost,
#    knapsack, staircase tables, DP, plan checker).
piper_unit_test(test_core test_core.c)
