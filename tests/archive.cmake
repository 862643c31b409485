# The archive, show, collect, checkpoints and resume, from the command line,
# in three parts (tests/archive/run_archive_tests.sh PART):
#  - archive_cli: writing, overwriting, show, damaged files, collect, flags;
#  - archive_h5tools: the archive read by h5dump and h5py (Skipped without them);
#  - archive_resume: stop on a signal, checkpoint and resume at 1 and 2 ranks
#    (Skipped without the shared BERT-32 input).
set(piper_archive_script ${CMAKE_CURRENT_SOURCE_DIR}/archive/run_archive_tests.sh)
add_test(NAME archive_cli COMMAND bash ${piper_archive_script} $<TARGET_FILE:piper> ${CMAKE_SOURCE_DIR} cli)
add_test(NAME archive_h5tools
  COMMAND ${PIPER_REQUIRE} -c h5dump -p h5py -- bash ${piper_archive_script} $<TARGET_FILE:piper> ${CMAKE_SOURCE_DIR} h5tools)
add_test(NAME archive_resume
  COMMAND ${PIPER_REQUIRE} -f ${PIPER_SHARED_DIR}/piper-inputs/bert32a100.json --
          bash ${piper_archive_script} $<TARGET_FILE:piper> ${CMAKE_SOURCE_DIR} resume ${PIPER_SHARED_DIR})
set_tests_properties(archive_cli archive_h5tools PROPERTIES TIMEOUT 600 SKIP_RETURN_CODE 77 LABELS cli)
set_tests_properties(archive_resume PROPERTIES TIMEOUT 600 SKIP_RETURN_CODE 77 LABELS mpi
  ENVIRONMENT "OMPI_ALLOW_RUN_AS_ROOT=1;OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1;OMPI_MCA_btl=self,vader")

# Hostile archives and checkpoints (tests/archive/craft.py derives them from a valid one):
# show, show --devices, show --curve, collect and plan --resume each exit 2 naming the dataset,
# and the valid checkpoint derived from the archive resumes to the same plan.  One valid
# archive per kind of table: 2bw's staircases, the Pareto rows of 1f1b, those of uniform
# plans (classes (t, d); gpipe), and those of interleaved 1f1b (--virtual-stages 2).
set(piper_crafted_script ${CMAKE_CURRENT_SOURCE_DIR}/archive/run_crafted.sh)
add_test(NAME archive_crafted COMMAND bash ${piper_crafted_script} $<TARGET_FILE:piper> ${CMAKE_SOURCE_DIR})
add_test(NAME archive_crafted_1f1b
  COMMAND bash ${piper_crafted_script} $<TARGET_FILE:piper> ${CMAKE_SOURCE_DIR} --schedule 1f1b)
add_test(NAME archive_crafted_uniform
  COMMAND bash ${piper_crafted_script} $<TARGET_FILE:piper> ${CMAKE_SOURCE_DIR} --uniform --schedule gpipe)
add_test(NAME archive_crafted_vstage
  COMMAND bash ${piper_crafted_script} $<TARGET_FILE:piper> ${CMAKE_SOURCE_DIR}
          --uniform --schedule 1f1b --virtual-stages 2)
set_tests_properties(archive_crafted archive_crafted_1f1b archive_crafted_uniform archive_crafted_vstage
  PROPERTIES TIMEOUT 900 SKIP_RETURN_CODE 77 LABELS cli
  ENVIRONMENT "OMPI_ALLOW_RUN_AS_ROOT=1;OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1;OMPI_MCA_btl=self,vader")

# Files that make the HDF5 library itself fault: read in a child first, so
# exit 2 and a message, not a crash; in every build (under AddressSanitizer
# the child's fault is a report and exit status 1, before its read returned,
# which counts as a crash too).
add_test(NAME archive_hdf5_fault
  COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/archive/run_hdf5_fault.sh $<TARGET_FILE:piper>
          ${CMAKE_CURRENT_SOURCE_DIR}/archive/hdf5-fault.h5
          ${CMAKE_CURRENT_SOURCE_DIR}/archive/hdf5-fault.ckpt ${CMAKE_SOURCE_DIR}/inputs/gpt3-1.3b-a100-80gb.json
          ${CMAKE_CURRENT_SOURCE_DIR}/archive/hdf5-overread.ckpt)
set_tests_properties(archive_hdf5_fault PROPERTIES TIMEOUT 120 LABELS cli)
