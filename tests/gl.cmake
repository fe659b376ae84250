# tests/gl.cmake - the OpenGL histogram test (test_gl_hist.c) and its failure
# paths: the same program run with no EGL platform (PIXSUM_GL_PLATFORM=bogus)
# and with a context that cannot be made (PIXSUM_GL_VERSION=9.9), where it
# checks that the GL methods answer PIXSUM_ERR_UNAVAILABLE, leave the counts
# untouched and (under `make test-sanitize`) leak nothing. Without an EGL
# display the main test exits 77 (skipped), or fails where
# PIXSUM_TEST_GL_REQUIRE=1 (as .ci/run sets it). No LeakSanitizer suppression is
# needed (see leave_display() in src/gl/gl_context.c for the one Mesa leak
# avoided).
if(TARGET test_gl_hist)
  set_tests_properties(test_gl_hist PROPERTIES LABELS "gl" TIMEOUT 900)
  add_test(NAME test_gl_hist_nodisplay COMMAND test_gl_hist)
  add_test(NAME test_gl_hist_nocontext COMMAND test_gl_hist)
  set_tests_properties(test_gl_hist_nodisplay PROPERTIES LABELS "gl" SKIP_RETURN_CODE 77
      ENVIRONMENT "PIXSUM_TEST_GL_EXPECT=unavailable;PIXSUM_GL_PLATFORM=bogus")
  set_tests_properties(test_gl_hist_nocontext PROPERTIES LABELS "gl" SKIP_RETURN_CODE 77
      ENVIRONMENT "PIXSUM_TEST_GL_EXPECT=unavailable;PIXSUM_GL_VERSION=9.9")
  # the pbuffer fallback (for EGLs without surfaceless contexts), on a subset
  add_test(NAME test_gl_hist_pbuffer COMMAND test_gl_hist)
  set_tests_properties(test_gl_hist_pbuffer PROPERTIES LABELS "gl" SKIP_RETURN_CODE 77
      ENVIRONMENT "PIXSUM_GL_PBUFFER=1;PIXSUM_TEST_FILTER=test_u8_shapes*")
endif()
