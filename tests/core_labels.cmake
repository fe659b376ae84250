# Properties of the core tests (tests/test_core*.c, test_integral*.c,
# test_box*.c, test_errors*.c):
#  - the concurrency test runs under ThreadSanitizer with `make test-tsan`
#    (ctest -L threads);
#  - they call threaded methods thousands of times on small images, where
#    libgomp's default busy-waiting between parallel regions costs seconds of
#    CPU on a shared 2-core machine; passive waiting keeps them fast without
#    changing what they check.
if(TEST test_core_threads)
  set_tests_properties(test_core_threads PROPERTIES LABELS threads)
endif()
foreach(t test_core test_core_threads test_integral test_integral_limits test_box test_errors)
  if(TEST ${t})
    set_tests_properties(${t} PROPERTIES ENVIRONMENT "OMP_WAIT_POLICY=passive")
  endif()
endforeach()
