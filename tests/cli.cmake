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
endif()
