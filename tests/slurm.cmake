# The job scripts of jobs/ against a real single-node Slurm started by the test itself
# (tests/slurm/run_slurm_test.sh: installs slurm-wlm when missing, needs root; exits 77, Skipped, otherwise).
add_test(NAME slurm COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/slurm/run_slurm_test.sh ${CMAKE_BINARY_DIR})
set_tests_properties(slurm PROPERTIES
  TIMEOUT 300
  LABELS slurm
  ENVIRONMENT "PIPER_SHARED_DIR=${PIPER_SHARED_DIR}"
  SKIP_RETURN_CODE 77
  RESOURCE_LOCK slurm) # (one apt-get at a time)

# jobs/plan.sbatch with `sbatch -N 2` on a real two-node Slurm, each node a network and UTS
# namespace of its own with its own slurmd (tests/slurm/two_nodes.sh): the plan, curve and /dp at
# 2 nodes x 1 and x 2 ranks are those of one process; and jobs/sweep.sbatch over both nodes, as
# one job and as a job array with a task on each node.  Installs slurm-wlm when missing; Skipped
# where that or namespaces are not possible.
add_test(NAME slurm_two_nodes COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/slurm/two_nodes.sh ${CMAKE_BINARY_DIR})
set_tests_properties(slurm_two_nodes PROPERTIES
  TIMEOUT 450
  LABELS "slurm;mpi"
  ENVIRONMENT "PIPER_SHARED_DIR=${PIPER_SHARED_DIR}"
  SKIP_RETURN_CODE 77
  RESOURCE_LOCK slurm)
