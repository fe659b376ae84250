# tests/cuda.cmake - the CUDA test (test_cuda.c) sees the CUDA runtime only in a
# CUDA build; otherwise it compiles to a program that reports itself skipped.
# Without a device it also exits 77 ("skipped: no CUDA device").
# test_cuda_hist.c (GPU histograms), test_cuda_tilted.c (tilted integral),
# test_cuda_box.c (box filter), test_cuda_threshold.c (local thresholds and
# normalisation) and test_cuda_failure.c (unreachable memory,
# device memory exhaustion, images of more than 2^31 pixels) are built and
# reported the same way.
foreach(_t test_cuda test_cuda_hist test_cuda_failure test_cuda_tilted test_cuda_box
           test_cuda_threshold)
  if(TARGET ${_t})
    if(PIXSUM_HAVE_CUDA)
      target_compile_definitions(${_t} PRIVATE PIXSUM_TEST_HAVE_CUDA=1)
      target_link_libraries(${_t} PRIVATE CUDA::cudart)
    endif()
    set_tests_properties(${_t} PROPERTIES LABELS "cuda;nosanitize" TIMEOUT 900)
  endif()
endforeach()
