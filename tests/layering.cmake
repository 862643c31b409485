# The layering (README, "Source layout") checked on the build: <mpi.h> and
# <hdf5.h> compile only in their owning layers, each library's undefined
# symbols come only from the layers below it and the foreign API it owns, and
# forbidden calls planted in the core are found (tests/layering/check_layering.py).
find_program(PIPER_PYTHON3 python3 REQUIRED)
add_test(NAME layering COMMAND ${PIPER_PYTHON3} ${CMAKE_CURRENT_SOURCE_DIR}/layering/check_layering.py ${CMAKE_BINARY_DIR})
set_tests_properties(layering PROPERTIES TIMEOUT 120 LABELS unit)
