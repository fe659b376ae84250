# tests/cuda.cmake - the CUDA test (test_cuda.c) sees the CUDA runtime only in a
# CUDA build; otherwise it compiles to a program that reports itself skipped.
# Without a device it also exits 77 ("skipped: no CUDA device").
if(TARGET test_cuda)
  if(PIXSUM_HAVE_CUDA)
    target_compile_definitions(test_cuda PRIVATE PIXSUM_TEST_HAVE_CUDA=1)
    target_link_libraries(test_cuda PRIVATE CUDA::cudart)
  endif()
  set_tests_properties(test_cuda PROPERTIES LABELS "cuda;nosanitize" TIMEOUT 900)
endif()
if(TARGET test_cuda_hist)
  if(PIXSUM_HAVE_CUDA)
    target_compile_definitions(test_cuda_hist PRIVATE PIXSUM_TEST_HAVE_CUDA=1)
    target_link_libraries(test_cuda_hist PRIVATE CUDA::cudart)
  endif()
  set_tests_properties(test_cuda_hist PROPERTIES LABELS "cuda;nosanitize" TIMEOUT 900)
endif()
