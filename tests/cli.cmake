# CLI tests: shell scripts in tests/cli/, each run by ctest as
#   sh SCRIPT $<TARGET_FILE:pixsum_cli> tests/cli
# exit 0 = pass, 77 = skipped (e.g. NumPy missing for a reference check).
if(TARGET pixsum_cli)
  file(GLOB PIXSUM_CLI_TESTS CONFIGURE_DEPENDS ${CMAKE_CURRENT_SOURCE_DIR}/cli/cli_*.sh)
  foreach(script IN LISTS PIXSUM_CLI_TESTS)
    get_filename_component(name ${script} NAME_WE)
    add_test(NAME ${name}
             COMMAND sh ${script} $<TARGET_FILE:pixsum_cli> ${CMAKE_CURRENT_SOURCE_DIR}/cli)
    set_tests_properties(${name} PROPERTIES TIMEOUT 900 SKIP_RETURN_CODE 77 LABELS cli)
  endforeach()
  # The two longest (hundreds of CLI runs each; 100 s and 45 s under the
  # sanitizers on 2 cores) start first, so that the short tests run beside
  # them rather than after them.
  foreach(name cli_stream cli_formats)
    if(TEST ${name})
      set_tests_properties(${name} PROPERTIES COST 500)
    endif()
  endforeach()
endif()
