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
