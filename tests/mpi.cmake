# MPI runs through mpiexec (never inside Criterion, which forks every test).
# OMPI_MCA_btl=self,vader keeps ranks off the network.
set(PIPER_MPI_ENV "OMPI_ALLOW_RUN_AS_ROOT=1;OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1;OMPI_MCA_btl=self,vader")

# Quick: the shipped default input at 1, 2 and 4 ranks.
foreach(np 1 2 4)
  add_test(NAME mpi_default_np${np}
    COMMAND ${MPIEXEC_EXECUTABLE} -np ${np} --oversubscribe $<TARGET_FILE:piper> plan
            ${CMAKE_SOURCE_DIR}/inputs/bert-large-a100-40gb.json --quiet --no-archive --format json)
  set_tests_properties(mpi_default_np${np} PROPERTIES TIMEOUT 120 ENVIRONMENT "${PIPER_MPI_ENV}"
    PASS_REGULAR_EXPRESSION "\"feasible\": true" LABELS mpi)
endforeach()

# Every reference case without a launcher and at 1, 2, 3, 4 and 8 ranks: same TPS, same
# plan, same curve, same /dp tables in the archive.
# PIPER_ALL_RANKS_WORK=1 makes every rank take DP work even beyond the cores of
# this machine, so that the work splits over 3, 4 and 8 ranks are exercised.
add_test(NAME mpi_rank_parity
  COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/mpi/rank_parity.sh $<TARGET_FILE:piper> ${PIPER_SHARED_DIR} 0 1 2 3 4 8)
set_tests_properties(mpi_rank_parity PROPERTIES TIMEOUT 2400 ENVIRONMENT "${PIPER_MPI_ENV};PIPER_ALL_RANKS_WORK=1"
  LABELS "mpi;slow" SKIP_RETURN_CODE 77)

# The default division of work: on this 2-core machine 4 ranks mean 2 working
# ranks and 2 that hold no tables but still take part in the archive.  The
# two keep their shared tables in MPI windows (PIPER_MPI_WINDOWS), as where
# a node's processes cannot share memory of their own; the other tests use
# that memory.
add_test(NAME mpi_rank_parity_idle_ranks
  COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/mpi/rank_parity.sh $<TARGET_FILE:piper> ${PIPER_SHARED_DIR} 1 4)
set_tests_properties(mpi_rank_parity_idle_ranks PROPERTIES TIMEOUT 1200 ENVIRONMENT "${PIPER_MPI_ENV};PIPER_MPI_WINDOWS=1"
  LABELS "mpi;slow" SKIP_RETURN_CODE 77)

# Two hosts emulated on this machine (network + UTS namespaces, Open MPI over TCP between them,
# started through tests/mpi/netns_agent.sh): rank parity at 2 hosts x 1 and 2 hosts x 2 ranks.
# Skipped (77) where namespaces are not permitted.
add_test(NAME mpi_multihost
  COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/mpi/multihost.sh $<TARGET_FILE:piper> ${CMAKE_SOURCE_DIR} ${PIPER_SHARED_DIR})
set_tests_properties(mpi_multihost PROPERTIES TIMEOUT 900 SKIP_RETURN_CODE 77 LABELS "mpi;slow" RUN_SERIAL ON)

# The MPI settings piper names before MPI starts are defaults that a user's
# own values override, and no launcher means neither is set.
add_test(NAME mpi_launcher_defaults
  COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/mpi/launcher_defaults.sh $<TARGET_FILE:piper>
          ${CMAKE_SOURCE_DIR}/inputs/bert-large-a100-40gb.json)
set_tests_properties(mpi_launcher_defaults PROPERTIES TIMEOUT 300 LABELS mpi)

# --schedule 1f1b/gpipe and --uniform at 1, 2 and 3 ranks, and show --devices
# from their archives.
add_test(NAME mpi_schedules
  COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/mpi/schedules.sh $<TARGET_FILE:piper>
          ${CMAKE_SOURCE_DIR}/inputs/bert-large-a100-40gb.json)
set_tests_properties(mpi_schedules PROPERTIES TIMEOUT 900 ENVIRONMENT "${PIPER_MPI_ENV}" LABELS mpi SKIP_RETURN_CODE 77)

# One copy of the tables per node, with the exchange between nodes: each
# node is treated as nodes of 2 working ranks (PIPER_EMULATE_NODE_SIZE), so
# 3 ranks are nodes of 2 + 1 and 4 ranks 2 + 2 (leaders all-gathering,
# the others reading their node's shared tables).
add_test(NAME mpi_rank_parity_nodes
  COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/mpi/rank_parity.sh $<TARGET_FILE:piper> ${PIPER_SHARED_DIR} 1 3 4)
set_tests_properties(mpi_rank_parity_nodes PROPERTIES TIMEOUT 2400
  ENVIRONMENT "${PIPER_MPI_ENV};PIPER_ALL_RANKS_WORK=1;PIPER_EMULATE_NODE_SIZE=2" LABELS "mpi;slow"
  SKIP_RETURN_CODE 77)

# Bad inputs at 2 ranks: the exit code and message of 1 rank (rank 0 reads a
# regular file at once and every rank parses it; other inputs it streams).
add_test(NAME mpi_bad_inputs
  COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/mpi/bad_inputs_ranks.sh $<TARGET_FILE:piper>
          ${CMAKE_CURRENT_SOURCE_DIR}/bad-inputs)
set_tests_properties(mpi_bad_inputs PROPERTIES TIMEOUT 600 LABELS mpi SKIP_RETURN_CODE 77)
