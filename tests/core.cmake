# Unit tests of the planner core.
