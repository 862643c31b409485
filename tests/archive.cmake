# The archive, show, collect, checkpoints and resume, from the command line.
add_test(NAME archive_cli
  COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/archive/run_archive_tests.sh $<TARGET_FILE:piper> ${CMAKE_SOURCE_DIR})
set_tests_properties(archive_cli PROPERTIES TIMEOUT 600
  ENVIRONMENT "OMPI_ALLOW_RUN_AS_ROOT=1;OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1;OMPI_MCA_btl=self,vader" LABELS mpi)
