# Tests of the model generator (piper gen): Criterion unit tests of the cost
# model, generated graphs that the planner must accept and solve, the
# command line, and the committed inputs/ that must match the generator.
piper_unit_test(test_gen piper_cli test_gen.c)

set(PIPER_GEN_SCRIPTS ${CMAKE_CURRENT_SOURCE_DIR}/gen)
set(PIPER_GEN_WORK ${CMAKE_CURRENT_BINARY_DIR}/gen-work)

# gen_plan_<name>: piper gen ... -o tmp.json, then piper plan must exit 0 with "feasible": true.
function(piper_gen_plan_test name)
  add_test(NAME gen_plan_${name}
           COMMAND sh ${PIPER_GEN_SCRIPTS}/plan_feasible.sh $<TARGET_FILE:piper> ${PIPER_GEN_WORK}/${name}.json ${ARGN})
  set_tests_properties(gen_plan_${name} PROPERTIES LABELS cli)
endfunction()

piper_gen_plan_test(bert_large_a100_40gb bert-large --gpu a100-40gb)
piper_gen_plan_test(gpt3_1_3b_split_a100_80gb gpt3-1.3b --gpu a100-80gb --split-blocks --devices 32)
piper_gen_plan_test(gpt3_13b_flash_h100 gpt3-13b --gpu h100-80gb --devices 64 --global-batch 512 --flash-attention)
piper_gen_plan_test(llama2_7b_h100 llama2-7b --gpu h100-80gb)
piper_gen_plan_test(llama2_70b_h200 llama2-70b --gpu h200-141gb --devices 128 --global-batch 256)

add_test(NAME gen_cli COMMAND sh ${PIPER_GEN_SCRIPTS}/cli.sh $<TARGET_FILE:piper> ${PIPER_GEN_WORK}/cli)
add_test(NAME gen_variants COMMAND sh ${PIPER_GEN_SCRIPTS}/variants.sh $<TARGET_FILE:piper> ${PIPER_GEN_WORK}/variants)
set_tests_properties(gen_variants PROPERTIES LABELS cli SKIP_RETURN_CODE 77)
add_test(NAME gen_inputs_drift
         COMMAND sh ${PIPER_GEN_SCRIPTS}/check_inputs.sh $<TARGET_FILE:piper> ${CMAKE_SOURCE_DIR}
                 ${PIPER_GEN_WORK}/inputs)
set_tests_properties(gen_inputs_drift PROPERTIES TIMEOUT 300)
set_tests_properties(gen_cli gen_inputs_drift PROPERTIES LABELS cli)

# The sweep kernel on a table too large for the dense block (a few seconds).
add_test(NAME gen_wide_sweep COMMAND sh ${PIPER_GEN_SCRIPTS}/wide_sweep.sh $<TARGET_FILE:piper>
                                     ${PIPER_GEN_WORK}/wide_sweep.json)
set_tests_properties(gen_wide_sweep PROPERTIES LABELS cli TIMEOUT 300)
