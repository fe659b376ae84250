# test_hist_cli.cmake - end-to-end test of `pixsum hist` and `pixsum equalize`
# on small ASCII PGM files written here: CSV and JSON output, ranges, bins,
# cumulative and relative forms, channel choice, masks, -o, and the exit
# status of bad calls. Included by tests/CMakeLists.txt (registers the test);
# run by ctest in script mode (does the checks).
if(NOT CMAKE_SCRIPT_MODE_FILE)
  if(TARGET pixsum_cli)
    add_test(NAME hist_cli
             COMMAND ${CMAKE_COMMAND} -DPIXSUM=$<TARGET_FILE:pixsum_cli>
                     -DWORK=${CMAKE_CURRENT_BINARY_DIR}/hist_cli
                     -P ${CMAKE_CURRENT_LIST_FILE})
    set_tests_properties(hist_cli PROPERTIES TIMEOUT 120)
  endif()
  return()
endif()

file(MAKE_DIRECTORY ${WORK})
# 4x2 gray image: values 0 1 2 3 / 3 3 200 255
file(WRITE ${WORK}/g.pgm "P2\n4 2\n255\n0 1 2 3\n3 3 200 255\n")
# mask selecting the first row only
file(WRITE ${WORK}/m.pgm "P2\n4 2\n255\n1 1 1 1\n0 0 0 0\n")
# 2x1 RGB image
file(WRITE ${WORK}/c.ppm "P3\n2 1\n255\n0 10 250 128 10 5\n")

function(run expect_rc)
  execute_process(COMMAND ${PIXSUM} ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE out
                  ERROR_VARIABLE err WORKING_DIRECTORY ${WORK})
  if(NOT rc EQUAL expect_rc)
    message(FATAL_ERROR "pixsum ${ARGN}: exit ${rc}, expected ${expect_rc}\n${out}\n${err}")
  endif()
  set(OUT "${out}" PARENT_SCOPE)
  set(ERR "${err}" PARENT_SCOPE)
endfunction()

function(expect_contains text what)
  string(FIND "${text}" "${what}" pos)
  if(pos EQUAL -1)
    message(FATAL_ERROR "expected to find [${what}] in:\n${text}")
  endif()
endfunction()

# default: 256 unit bins
run(0 hist g.pgm)
expect_contains("${OUT}" "bin,lower,upper,c0\n0,0,1,1\n1,1,2,1\n2,2,3,1\n3,3,4,3\n")
expect_contains("${OUT}" "\n200,200,201,1\n")
expect_contains("${OUT}" "\n255,255,256,1\n")
# 2 bins over [0, 4): 2 below-2 values, 4 values 2..3, 2 above
run(0 hist g.pgm --bins 2 --range 0:4 --format json)
expect_contains("${OUT}" "\"values\": [\n    [2, 4]\n  ]")
expect_contains("${OUT}" "\"above\": [2]")
expect_contains("${OUT}" "\"in_range\": [6]")
# cumulative and relative
run(0 hist g.pgm --bins 2 --range 0:4 --cumulative)
expect_contains("${OUT}" "0,0,2,2\n1,2,4,6\n")
run(0 hist g.pgm --bins 2 --range 0:4 --relative --cumulative)
expect_contains("${OUT}" "1,2,4,1\n")
run(0 hist g.pgm --bins 2 --range 0:4 --relative)
expect_contains("${OUT}" "0,0,2,0.33333333333333331\n")
# mask: first row 0 1 2 3
run(0 hist g.pgm --bins 2 --range 0:4 --mask m.pgm -o h.csv)
file(READ ${WORK}/h.csv csv)
expect_contains("${csv}" "0,0,2,2\n1,2,4,2\n")
# channels
run(0 hist c.ppm --bins 2 --range 0:256)
expect_contains("${OUT}" "bin,lower,upper,c0,c1,c2\n0,0,128,1,2,1\n1,128,256,1,0,1\n")
run(0 hist c.ppm --bins 2 --range 0:256 --channel 1)
expect_contains("${OUT}" "bin,lower,upper,c1\n0,0,128,2\n")
# equalisation: values 0 1 2 3 3 3 200 255 -> cdf 1 2 3 6 6 6 7 8, cmin 1
run(0 equalize g.pgm -o e.pgm)
run(0 hist e.pgm --format json)
expect_contains("${OUT}" "\"in_range\": [8]")
# bad calls
run(2 hist)
run(2 hist g.pgm --bins 0)
run(2 hist g.pgm --range 4:1)
run(2 hist g.pgm --format xml)
run(2 hist g.pgm --channel 1)
run(1 hist missing.pgm)
run(1 hist g.pgm --mask c.ppm)
run(2 equalize g.pgm)
message(STATUS "hist_cli: all checks passed")
