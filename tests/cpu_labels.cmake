# Labels of the CPU-speed tests (issue 3): test_cpu_methods runs the threaded
# methods (OpenMP and paper 001's POSIX threads), so `make test-tsan` runs it.
if(TEST test_cpu_methods)
  set_property(TEST test_cpu_methods APPEND PROPERTY LABELS threads)
endif()
