# mpi_script_lib.cmake - what the MPI end-to-end test scripts
# (tests/mpi_cli.cmake, tests/mpi_hist_cli.cmake) share: at configure time the
# registration of a script as ctest tests on 1-4 ranks; when the script runs
# (-P), the checks: commands that must succeed or fail with a given status, and
# comparisons of outputs (whole files, or the table data of two .npy files
# whose headers may differ).

# Registers `script` (run with -P) as the tests <name>_np1..4, each on that
# many ranks, when the build has MPI and the tool.
function(pixsum_add_mpi_script_tests name script)
  if(NOT (PIXSUM_HAVE_MPI AND MPIEXEC_EXECUTABLE AND TARGET pixsum_cli))
    return()
  endif()
  foreach(np 1 2 3 4)
    add_test(NAME ${name}_np${np}
             COMMAND ${CMAKE_COMMAND} -DPIXSUM=$<TARGET_FILE:pixsum_cli>
                     -DMPIEXEC=${MPIEXEC_EXECUTABLE} -DNP=${np}
                     -DWORK=${CMAKE_CURRENT_BINARY_DIR}/${name}_np${np}
                     -P ${script})
    set_tests_properties(${name}_np${np} PROPERTIES
        ENVIRONMENT "OMPI_ALLOW_RUN_AS_ROOT=1;OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1;ASAN_OPTIONS=detect_leaks=0"
        LABELS mpi TIMEOUT 300 RESOURCE_LOCK pixsum_mpi PROCESSORS ${np})
  endforeach()
endfunction()
function(run_ok)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE out
                  ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "failed (${rc}): ${ARGN}\n${out}\n${err}")
  endif()
endfunction()
# Runs a command with its stdout into `file`.
function(run_to file)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc OUTPUT_FILE ${file}
                  ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "failed (${rc}): ${ARGN}\n${err}")
  endif()
endfunction()
function(expect_rc want)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc OUTPUT_QUIET ERROR_VARIABLE err)
  if(NOT rc EQUAL want)
    message(FATAL_ERROR "expected exit ${want}, got ${rc}: ${ARGN}\n${err}")
  endif()
endfunction()
function(same_file a b)
  file(SIZE ${a} sa)
  execute_process(COMMAND ${CMAKE_COMMAND} -E compare_files ${a} ${b} RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0 OR sa EQUAL 0)
    message(FATAL_ERROR "${a} and ${b} differ (or are empty)")
  endif()
endfunction()
# The data of a .npy file (v1.0 header) as hex.
function(npy_data path outvar)
  file(READ ${path} pre LIMIT 10 HEX)
  string(SUBSTRING "${pre}" 16 2 lo)
  string(SUBSTRING "${pre}" 18 2 hi)
  math(EXPR hlen "0x${hi} * 256 + 0x${lo} + 10")
  file(READ ${path} data OFFSET ${hlen} HEX)
  set(${outvar} "${data}" PARENT_SCOPE)
endfunction()
function(same_data a b)
  npy_data(${a} da)
  npy_data(${b} db)
  string(LENGTH "${da}" la)
  if(la EQUAL 0 OR NOT da STREQUAL db)
    message(FATAL_ERROR "${a} and ${b} hold different tables (${la} hex digits)")
  endif()
endfunction()
