# Faults: a full disk and a read-only folder (tmpfs mounts; Skipped without
# mount rights), and stray signals, killed ranks, concurrent runs and out of
# memory (tests/fault/run_fault_tests.sh).
foreach(part disk stop)
  add_test(NAME fault_${part}
    COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/fault/run_fault_tests.sh $<TARGET_FILE:piper> ${CMAKE_SOURCE_DIR} ${part})
  set_tests_properties(fault_${part} PROPERTIES TIMEOUT 300 SKIP_RETURN_CODE 77 LABELS mpi
    ENVIRONMENT "OMPI_ALLOW_RUN_AS_ROOT=1;OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1;OMPI_MCA_btl=self,vader")
endforeach()

# jobs/sweep.sbatch --check validates every row with piper's own rules (jobs/lib/grid.sh).
add_test(NAME grid_check
  COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/grid/run_grid_check.sh $<TARGET_FILE:piper> ${CMAKE_SOURCE_DIR})
set_tests_properties(grid_check PROPERTIES TIMEOUT 120 LABELS cli)

# Very wide inputs (100,000 nodes): refused by the downset limits, which count
# the bitset width, before allocating; bounded RSS and time.
add_test(NAME fault_wide_inputs COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/fault/wide_inputs.sh $<TARGET_FILE:piper>)
set_tests_properties(fault_wide_inputs PROPERTIES TIMEOUT 180 SKIP_RETURN_CODE 77 LABELS "cli;slow")

# SIGTERM to both ranks during MPI start-up (tests/fault/startup_signal.sh).
add_test(NAME fault_startup_signal
  COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/fault/startup_signal.sh $<TARGET_FILE:piper> ${CMAKE_SOURCE_DIR})
set_tests_properties(fault_startup_signal PROPERTIES TIMEOUT 300 SKIP_RETURN_CODE 77 LABELS mpi)
