# The paper's experiments: the equi baseline against the public reference code.
# Quick: a few Fig. 1 and appendix configurations; slow: all of them (GNMT makes the reference
# enumerate 15.5 M downset pairs per run).  Both build the reference driver once (needs g++ and
# nlohmann-json3-dev; Skipped otherwise).
set(PIPER_PAPER_ENV "OMPI_ALLOW_RUN_AS_ROOT=1;OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1;OMPI_MCA_btl=self,vader")
add_test(NAME equi_ref_quick
  COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/paper/equi_parity.sh $<TARGET_FILE:piper> ${CMAKE_SOURCE_DIR}
          ${PIPER_SHARED_DIR} ${CMAKE_BINARY_DIR} --quick)
set_tests_properties(equi_ref_quick PROPERTIES TIMEOUT 600 SKIP_RETURN_CODE 77 LABELS cli
  ENVIRONMENT "${PIPER_PAPER_ENV}" RESOURCE_LOCK piper_ref_build)
add_test(NAME equi_ref_full
  COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/paper/equi_parity.sh $<TARGET_FILE:piper> ${CMAKE_SOURCE_DIR}
          ${PIPER_SHARED_DIR} ${CMAKE_BINARY_DIR})
set_tests_properties(equi_ref_full PROPERTIES TIMEOUT 1800 SKIP_RETURN_CODE 77 LABELS "cli;slow"
  ENVIRONMENT "${PIPER_PAPER_ENV}" RESOURCE_LOCK piper_ref_build)
# show --dp-sum / --curve-dp-sum (the s axis of Fig. 2).
add_test(NAME show_dp_sum COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/paper/show_dp_sum.sh $<TARGET_FILE:piper>
         ${CMAKE_SOURCE_DIR})
set_tests_properties(show_dp_sum PROPERTIES TIMEOUT 300 LABELS cli ENVIRONMENT "${PIPER_PAPER_ENV}")
# piper plot: golden, deterministic, well-formed SVG and bad inputs; rendering by rsvg-convert.
add_test(NAME plot_svg COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/plot/run_plot_tests.sh $<TARGET_FILE:piper>
         ${CMAKE_SOURCE_DIR} svg)
set_tests_properties(plot_svg PROPERTIES TIMEOUT 300 LABELS cli ENVIRONMENT "${PIPER_PAPER_ENV}")
add_test(NAME plot_render COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/plot/run_plot_tests.sh $<TARGET_FILE:piper>
         ${CMAKE_SOURCE_DIR} render)
set_tests_properties(plot_render PROPERTIES TIMEOUT 600 SKIP_RETURN_CODE 77 LABELS cli ENVIRONMENT "${PIPER_PAPER_ENV}")
