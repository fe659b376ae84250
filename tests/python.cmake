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
    # `pip install .` from a copy of the checkout, then the same suite against it
    add_test(NAME python_pip_install
             COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/python_pip.sh ${Python3_EXECUTABLE}
                     ${PROJECT_SOURCE_DIR} ${PROJECT_BINARY_DIR}/pip-install)
    # COST: the longest test (about 130 s on 2 cores, mostly compiling the
    # library): ctest starts it first so the short tests run beside it
    # instead of after it (.ci/run has 30 minutes on 2 cores)
    set_tests_properties(python_pip_install PROPERTIES
        LABELS "python;nosanitize" TIMEOUT 900 SKIP_RETURN_CODE 77 COST 1000)
  endif()
endif()
