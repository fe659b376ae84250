# Labels of the core tests (tests/test_core*.c and friends): the concurrency
# test runs under ThreadSanitizer with `make test-tsan` (ctest -L threads).
if(TEST test_core_threads)
  set_tests_properties(test_core_threads PROPERTIES LABELS threads)
endif()
