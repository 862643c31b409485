# The job scripts of jobs/ against a real single-node Slurm started by the test itself
# (tests/slurm/run_slurm_test.sh: installs slurm-wlm when missing, needs root; exits 77, Skipped, otherwise).
add_test(NAME slurm COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/slurm/run_slurm_test.sh ${CMAKE_BINARY_DIR})
set_tests_properties(slurm PROPERTIES
  TIMEOUT 300
  LABELS slurm
  ENVIRONMENT "PIPER_SHARED_DIR=${PIPER_SHARED_DIR}"
  SKIP_RETURN_CODE 77)
