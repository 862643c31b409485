# The example archives and study table of outputs/example/ regenerated and
# compared with h5dump (Skipped without it); tests/golden/update.sh rewrites them.
add_test(NAME outputs_examples COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/outputs/check.sh $<TARGET_FILE:piper> ${CMAKE_SOURCE_DIR})
set_tests_properties(outputs_examples PROPERTIES TIMEOUT 120 LABELS cli SKIP_RETURN_CODE 77)
