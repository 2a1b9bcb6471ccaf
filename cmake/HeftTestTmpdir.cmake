# Every test's temporary files in one folder of this build tree's own, emptied at the start of each
# ctest run: TMPDIR points there for every test (GoogleTest's testing::TempDir(), Python's
# tempfile, std::filesystem::temp_directory_path and the heft programs the tests start all honour
# it). So two build trees, or two clones tested at once on one machine, never share a file name;
# nothing accumulates in /tmp from run to run; and the last run's files stay until the next one,
# for a look after a failure.
#
# The folder is under the system's temporary folder, not the build tree, so that a Unix socket's
# path stays short (108 bytes) wherever the tree is: ${TMPDIR:-/tmp}/heft-tests-<12 hex digits of
# the build tree's path>. HEFT_TEST_TMPDIR overrides it.
string(SHA1 heft_tree_hash "${CMAKE_BINARY_DIR}")
string(SUBSTRING "${heft_tree_hash}" 0 12 heft_tree_hash)
if(DEFINED ENV{TMPDIR} AND IS_DIRECTORY "$ENV{TMPDIR}")
  set(heft_tmp_base "$ENV{TMPDIR}")
else()
  set(heft_tmp_base "/tmp")
endif()
set(HEFT_TEST_TMPDIR "${heft_tmp_base}/heft-tests-${heft_tree_hash}"
    CACHE PATH "The tests' temporary folder (emptied at the start of each ctest run)")

# The fixture every test requires: ctest adds it to any selection (-R, -L, a preset's filter) and
# runs it first.
function(heft_add_test_tmpdir_fixture)
  add_test(NAME heft_test_tmpdir
           COMMAND ${CMAKE_COMMAND} -DDIR=${HEFT_TEST_TMPDIR} -P ${HEFT_SOURCE_DIR}/cmake/HeftTestTmpdirReset.cmake)
  set_tests_properties(heft_test_tmpdir PROPERTIES FIXTURES_SETUP heft_tmpdir LABELS "fixture")
endfunction()

# Every test add_test defined in the calling folder so far (the fixture excepted): call it at the end
# of each CMakeLists.txt that uses add_test (CMake 3.25 sets a test's properties only from its own
# folder). heft_add_test's tests get the same from their include script.
function(heft_test_tmpdir_apply)
  get_property(tests DIRECTORY PROPERTY TESTS)
  foreach(t IN LISTS tests)
    if(NOT t STREQUAL "heft_test_tmpdir")
      set_property(TEST ${t} APPEND PROPERTY ENVIRONMENT_MODIFICATION "TMPDIR=set:${HEFT_TEST_TMPDIR}")
      set_property(TEST ${t} APPEND PROPERTY FIXTURES_REQUIRED heft_tmpdir)
    endif()
  endforeach()
  list(LENGTH tests count)
  set_property(DIRECTORY PROPERTY HEFT_TESTS_WITH_TMPDIR ${count})
endfunction()

# At the end of the top folder: every folder's add_test tests went through heft_test_tmpdir_apply
# (a folder that forgot the call, or added a test after it, stops the configuration).
function(heft_test_tmpdir_check dir)
  get_property(tests DIRECTORY ${dir} PROPERTY TESTS)
  list(REMOVE_ITEM tests heft_test_tmpdir)
  list(LENGTH tests count)
  get_property(applied DIRECTORY ${dir} PROPERTY HEFT_TESTS_WITH_TMPDIR)
  if(count GREATER 0 AND NOT applied EQUAL count)
    message(FATAL_ERROR "${dir}/CMakeLists.txt adds tests (${tests}) without ending with "
                        "heft_test_tmpdir_apply() (cmake/HeftTestTmpdir.cmake)")
  endif()
  get_property(subdirs DIRECTORY ${dir} PROPERTY SUBDIRECTORIES)
  foreach(sub IN LISTS subdirs)
    heft_test_tmpdir_check(${sub})
  endforeach()
endfunction()
