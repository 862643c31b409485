# Golden files (tests/golden/): every --help, the text and JSON reports of
# plan and show, compared after masking run-dependent fields.  After changing
# one of these outputs on purpose: tests/golden/update.sh, review, commit.
add_test(NAME golden COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/golden/run.sh $<TARGET_FILE:piper> ${CMAKE_SOURCE_DIR})
set_tests_properties(golden PROPERTIES TIMEOUT 120 LABELS cli)
