# `piper sweep`: grids with bad rows, archives identical to piper plan's,
# resume, collect, and 1 or 2 ranks (tests/sweep/run_sweep_tests.sh).
add_test(NAME sweep_cli COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/sweep/run_sweep_tests.sh $<TARGET_FILE:piper>
                                ${CMAKE_SOURCE_DIR})
set_tests_properties(sweep_cli PROPERTIES TIMEOUT 300 SKIP_RETURN_CODE 77 LABELS "cli;mpi")
# Grid flags zero1..3 / 1f1b / gpipe / uniform, collect's ZeRO and network columns, the shipped
# what-if grid (tests/sweep/run_study_flags.sh).
add_test(NAME sweep_study_flags COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/sweep/run_study_flags.sh
                                        $<TARGET_FILE:piper> ${CMAKE_SOURCE_DIR})
set_tests_properties(sweep_study_flags PROPERTIES TIMEOUT 300 SKIP_RETURN_CODE 77 LABELS cli)
