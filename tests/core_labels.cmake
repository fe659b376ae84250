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
foreach(t test_core test_core_threads test_integral test_integral_limits test_integral_batch test_box
          test_errors)
  if(TEST ${t})
    set_tests_properties(${t} PROPERTIES ENVIRONMENT "OMP_WAIT_POLICY=passive")
  endif()
endforeach()

# The property tests of test_integral once more for each instruction set the
# fast methods can be forced to (PIXSUM_FORCE_ISA; a request above what the CPU
# has falls back to what it has), with and without non-temporal (streamed)
# stores forced on for every table (PIXSUM_STREAM_BYTES=1), so the kernels the
# default run does not pick are checked against the reference too. Only the
# methods those switches affect run (PIXSUM_TEST_METHODS).
if(TEST test_integral)
  foreach(isa sse2 avx2 avx512)
    foreach(stream 0 1)
      set(name test_integral_${isa})
      set(envs "OMP_WAIT_POLICY=passive" "PIXSUM_FORCE_ISA=${isa}"
               "PIXSUM_TEST_METHODS=simd.,omp.,p001.")
      if(stream)
        set(name ${name}_streamed)
        list(APPEND envs "PIXSUM_STREAM_BYTES=1")
      endif()
      add_test(NAME ${name} COMMAND test_integral)
      set_tests_properties(${name} PROPERTIES ENVIRONMENT "${envs}" TIMEOUT 600)
    endforeach()
  endforeach()
endif()
