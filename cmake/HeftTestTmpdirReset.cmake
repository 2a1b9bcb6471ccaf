# cmake -DDIR=<folder> -P HeftTestTmpdirReset.cmake: the tests' temporary folder, emptied
# (cmake/HeftTestTmpdir.cmake). Refuses a DIR that is not a heft-tests folder of its own, so that a
# wrong cache value cannot empty something else.
if(NOT DIR)
  message(FATAL_ERROR "HeftTestTmpdirReset.cmake: DIR is not set")
endif()
get_filename_component(name "${DIR}" NAME)
if(NOT name MATCHES "^heft-tests")
  message(FATAL_ERROR "HeftTestTmpdirReset.cmake: refusing to empty ${DIR} (its name does not start with heft-tests)")
endif()
file(REMOVE_RECURSE "${DIR}")
file(MAKE_DIRECTORY "${DIR}")
message(STATUS "the tests' temporary folder: ${DIR}")
