# `piper sweep`: grids with bad rows, archives identical to piper plan's,
# resume, collect, and 1 or 2 ranks (tests/sweep/run_sweep_tests.sh).
add_test(NAME sweep_cli COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/sweep/run_sweep_tests.sh $<TARGET_FILE:piper>
                                ${CMAKE_SOURCE_DIR})
set_tests_properties(sweep_cli PROPERTIES TIMEOUT 300 SKIP_RETURN_CODE 77 LABELS "cli;mpi")
