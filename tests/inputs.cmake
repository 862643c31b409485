# Input handling: the graph loader and unit parsing (unit tests), and a
# corpus of malformed inputs and command lines run through the program.
piper_unit_test(test_graph piper_model test_graph.c)
piper_unit_test(test_graph_errors piper_model test_graph_errors.c)
piper_unit_test(test_units piper_base test_units.c)
piper_unit_test(test_isolate piper_base test_isolate.c)
piper_unit_test(test_fabric piper_base test_fabric.c)
piper_unit_test(test_pages piper_base test_pages.c)
piper_unit_test(test_nodelay piper_base test_nodelay.c)

add_test(NAME bad_inputs
         COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/run_bad_inputs.sh $<TARGET_FILE:piper>
                 ${CMAKE_CURRENT_SOURCE_DIR}/bad-inputs)
set_tests_properties(bad_inputs PROPERTIES TIMEOUT 900 LABELS cli)
# The bounds-checked packing module and the plan's packed form.
piper_unit_test(test_pack piper_model test_pack.c)
