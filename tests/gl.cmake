# tests/gl.cmake - the OpenGL histogram test (test_gl_hist.c) and its failure
# paths: the same program run with no EGL platform (PIXSUM_GL_PLATFORM=bogus)
# and with a context that cannot be made (PIXSUM_GL_VERSION=9.9), where it
# checks that the GL methods answer PIXSUM_ERR_UNAVAILABLE and leak nothing.
# Without an EGL display the main test exits 77 (skipped). Mesa's llvmpipe
# leaves allocations LeakSanitizer reports when a display is terminated after a
# failed context creation; tests/gl_lsan.supp suppresses those (Mesa's frames
# only) in sanitizer builds.
if(TARGET test_gl_hist)
  set(_gl_lsan "LSAN_OPTIONS=suppressions=${CMAKE_CURRENT_SOURCE_DIR}/gl_lsan.supp:print_suppressions=0")
  set_tests_properties(test_gl_hist PROPERTIES LABELS "gl" TIMEOUT 900
                       ENVIRONMENT "${_gl_lsan}")
  add_test(NAME test_gl_hist_nodisplay COMMAND test_gl_hist)
  add_test(NAME test_gl_hist_nocontext COMMAND test_gl_hist)
  set_tests_properties(test_gl_hist_nodisplay PROPERTIES LABELS "gl" SKIP_RETURN_CODE 77
      ENVIRONMENT "PIXSUM_TEST_GL_EXPECT=unavailable;PIXSUM_GL_PLATFORM=bogus;${_gl_lsan}")
  set_tests_properties(test_gl_hist_nocontext PROPERTIES LABELS "gl" SKIP_RETURN_CODE 77
      ENVIRONMENT "PIXSUM_TEST_GL_EXPECT=unavailable;PIXSUM_GL_VERSION=9.9;${_gl_lsan}")
endif()
