# Properties of the histogram concurrency test: it runs under ThreadSanitizer
# with `make test-tsan` (ctest -L threads), and with passive OpenMP waiting
# (hist.omp is called many times on small images on a shared 2-core machine).
if(TEST test_hist_threads)
  set_tests_properties(test_hist_threads PROPERTIES
      LABELS threads ENVIRONMENT "OMP_WAIT_POLICY=passive")
endif()
# The per-thread scratch of the histogram tables (src/scratch.c) runs under
# ThreadSanitizer too.
if(TEST test_scratch)
  set_property(TEST test_scratch APPEND PROPERTY LABELS threads)
endif()
