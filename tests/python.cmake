# Registers the Python package's pytest suite (python/tests) with ctest. The
# extension is imported from the build tree (PYTHONPATH), with the interpreter
# the extension was built for. Skipped (not registered) without the Python part
# or without pytest.
if(PIXSUM_HAVE_PYTHON)
  execute_process(COMMAND ${Python3_EXECUTABLE} -c "import pytest"
                  RESULT_VARIABLE _pixsum_no_pytest OUTPUT_QUIET ERROR_QUIET)
  if(_pixsum_no_pytest)
    message(STATUS "pixsum Python: pytest not found for ${Python3_EXECUTABLE}; "
                   "python tests not registered (install python3-pytest)")
  else()
    add_test(NAME python_pytest
             COMMAND ${Python3_EXECUTABLE} -m pytest -q -p no:cacheprovider
                     ${PROJECT_SOURCE_DIR}/python/tests
             WORKING_DIRECTORY ${PROJECT_BINARY_DIR}/python)
    set_tests_properties(python_pytest PROPERTIES
        ENVIRONMENT "PYTHONPATH=${PROJECT_BINARY_DIR}/python;PYTHONDONTWRITEBYTECODE=1"
        LABELS "python;nosanitize" TIMEOUT 600 SKIP_RETURN_CODE 5)
    # scikit-image's own installed tests of the functions pixsum.compat.skimage
    # provides, with their imports redirected to it (tests/skimage_suite:
    # the plugin, the known failures and why); prints how many reached pixsum
    execute_process(COMMAND ${Python3_EXECUTABLE} -c
                            "import os, skimage; print(os.path.dirname(skimage.__file__))"
                    OUTPUT_VARIABLE _pixsum_skimage_dir RESULT_VARIABLE _pixsum_no_skimage
                    OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
    if(_pixsum_no_skimage OR NOT EXISTS ${_pixsum_skimage_dir}/filters/tests/test_thresholding.py)
      message(STATUS "pixsum Python: scikit-image and its tests not found for "
                     "${Python3_EXECUTABLE}; python_skimage_suite not registered "
                     "(install python3-skimage)")
    else()
      add_test(NAME python_skimage_suite
               COMMAND ${Python3_EXECUTABLE} -m pytest -q -p no:cacheprovider
                       -p pixsum_skimage_plugin --disable-warnings
                       ${_pixsum_skimage_dir}/transform/tests/test_integral.py
                       ${_pixsum_skimage_dir}/exposure/tests/test_exposure.py
                       ${_pixsum_skimage_dir}/filters/tests/test_thresholding.py
               WORKING_DIRECTORY ${PROJECT_BINARY_DIR}/python)
      # COST: about 20 s of CPU (scikit-image's slow references, not pixsum)
      set_tests_properties(python_skimage_suite PROPERTIES
          ENVIRONMENT "PYTHONPATH=${PROJECT_BINARY_DIR}/python:${PROJECT_SOURCE_DIR}/tests/skimage_suite;PYTHONDONTWRITEBYTECODE=1"
          LABELS "python;nosanitize" TIMEOUT 300 COST 60)
    endif()
    # python/README.md's install commands (a virtual environment and a --target
    # install, each builds the package) from a copy of the checkout, a smoke
    # test, then the same suite against the --target install
    add_test(NAME python_pip_install
             COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/python_pip.sh ${Python3_EXECUTABLE}
                     ${PROJECT_SOURCE_DIR} ${PROJECT_BINARY_DIR}/pip-install)
    # COST: the longest test (about 130 s on 2 cores per build of the package,
    # and it builds twice; mostly compiling the library): ctest starts it
    # first so the short tests run beside it instead of after it (.ci/run has
    # 30 minutes on 2 cores)
    set_tests_properties(python_pip_install PROPERTIES
        LABELS "python;nosanitize" TIMEOUT 900 SKIP_RETURN_CODE 77 COST 1000)
  endif()
endif()
