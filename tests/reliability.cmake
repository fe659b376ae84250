# Reliability tests (issue 9):
#  - test_failure_alloc: every allocation of the library is routed through
#    wrappers that can fail the N-th one (GNU ld --wrap, static library only);
#  - test_huge*: images of more than 2^31 pixels; they need ~12 GiB and tens of
#    seconds, so they are labelled `huge` (ctest -LE huge skips them) and
#    `nosanitize` (make test-sanitize skips them).
if(TEST test_failure_alloc)
  target_link_options(test_failure_alloc PRIVATE
    -Wl,--wrap=malloc,--wrap=calloc,--wrap=realloc,--wrap=posix_memalign,--wrap=aligned_alloc)
  set_tests_properties(test_failure_alloc PROPERTIES LABELS "failure"
                       ENVIRONMENT "OMP_WAIT_POLICY=passive")
  # once more with non-temporal stores forced on for every table: the streaming
  # paths allocate row buffers the cached ones do not (omp.banded once wrote
  # a band before another band's buffer failed)
  add_test(NAME test_failure_alloc_streamed COMMAND test_failure_alloc)
  set_tests_properties(test_failure_alloc_streamed PROPERTIES LABELS "failure"
                       ENVIRONMENT "OMP_WAIT_POLICY=passive;PIXSUM_STREAM_BYTES=1")
endif()
file(GLOB PIXSUM_HUGE_TESTS CONFIGURE_DEPENDS ${CMAKE_CURRENT_SOURCE_DIR}/test_huge*.c)
foreach(src IN LISTS PIXSUM_HUGE_TESTS)
  get_filename_component(name ${src} NAME_WE)
  if(TEST ${name})
    set_tests_properties(${name} PROPERTIES LABELS "huge;nosanitize" TIMEOUT 900
                         RUN_SERIAL ON)
  endif()
endforeach()
