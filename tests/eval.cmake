# `piper eval`: evaluation of given plans and framework configurations.
add_test(NAME eval_cli COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/eval/eval_cli.sh $<TARGET_FILE:piper>
                               ${CMAKE_CURRENT_BINARY_DIR}/eval-work)
set_tests_properties(eval_cli PROPERTIES LABELS cli TIMEOUT 120
  ENVIRONMENT "OMPI_ALLOW_RUN_AS_ROOT=1;OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1;OMPI_MCA_btl=self,vader")
add_test(NAME validate_table COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/eval/validate_table.sh $<TARGET_FILE:piper>
                                     ${CMAKE_SOURCE_DIR} ${CMAKE_CURRENT_BINARY_DIR}/validate-work)
set_tests_properties(validate_table PROPERTIES LABELS cli TIMEOUT 120 SKIP_RETURN_CODE 77)
# `plan --virtual-stages`: usage rules, a plan, and archives whose tables
# break the interleaved rows' rule refused by `show` (edited with h5py).
add_test(NAME vstage_cli COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/sched/vstage_cli.sh $<TARGET_FILE:piper>
                                 ${CMAKE_CURRENT_BINARY_DIR}/vstage-work)
set_tests_properties(vstage_cli PROPERTIES LABELS cli TIMEOUT 120 SKIP_RETURN_CODE 77
  ENVIRONMENT "OMPI_ALLOW_RUN_AS_ROOT=1;OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1;OMPI_MCA_btl=self,vader")
# --max-memory-use checked against the tables held, after each layer, on
# 1 and 2 ranks.
add_test(NAME held_limit
  COMMAND ${PIPER_REQUIRE} -f ${PIPER_SHARED_DIR}/piper-inputs/bert32a100.json --
          sh ${CMAKE_CURRENT_SOURCE_DIR}/sched/held_limit.sh $<TARGET_FILE:piper>
             ${CMAKE_CURRENT_BINARY_DIR}/held-limit-work ${PIPER_SHARED_DIR})
set_tests_properties(held_limit PROPERTIES LABELS cli TIMEOUT 300 SKIP_RETURN_CODE 77)
