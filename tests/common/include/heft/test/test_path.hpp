// Force-included into test targets whose definitions name absolute paths
// (cmake/HeftTestPaths.cmake): HEFT_CONFIG_DIR and the like expand to
// heft_test_path("HEFT_CONFIG_DIR"), defined in a source generated for the target, so that the
// test's own compile line is the same in every clone.
#pragma once

const char* heft_test_path(const char* name);
