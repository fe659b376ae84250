# Fuzz targets (tests/fuzz/): fuzz_api (the public C API) and fuzz_image (the
# tool's image decoders). Two builds of each:
#  - always: a replay program (the target + tests/fuzz/fuzz_replay.c) that runs
#    the seed corpus and every crash reproducer kept in tests/fuzz/corpus/<name>/
#    as a ctest (so regressions are caught by `make test` and, under ASan/UBSan,
#    by `make test-sanitize`);
#  - with -DPIXSUM_FUZZ=ON (clang only; `make fuzz` configures it): the libFuzzer
#    executables <name>_fuzzer, linked with -fsanitize=fuzzer. The library is
#    instrumented by the flags `make fuzz` passes (-fsanitize=fuzzer-no-link plus
#    PIXSUM_SANITIZE's address,undefined).
option(PIXSUM_FUZZ "Build the libFuzzer targets (clang only)" OFF)
if(PIXSUM_FUZZ AND NOT CMAKE_C_COMPILER_ID MATCHES "Clang")
  message(FATAL_ERROR "PIXSUM_FUZZ=ON needs clang (CC=clang); found ${CMAKE_C_COMPILER_ID}")
endif()

set(PIXSUM_FUZZ_DIR ${CMAKE_CURRENT_SOURCE_DIR}/fuzz)
set(PIXSUM_FUZZ_TARGETS fuzz_api)
set(fuzz_api_SOURCES ${PIXSUM_FUZZ_DIR}/fuzz_api.c)
set(fuzz_api_LIBS pixsum_static m)
set(fuzz_api_DEFS "")

# The decoders live in tools/ (the core has no file dependency); the target
# compiles them itself with the same optional libraries the tool uses.
if(PIXSUM_BUILD_TOOLS)
  list(APPEND PIXSUM_FUZZ_TARGETS fuzz_image)
  file(GLOB fuzz_image_io CONFIGURE_DEPENDS ${PROJECT_SOURCE_DIR}/tools/image_io*.c)
  # image_io.c writes its files through out_file.c (docs/cli.md, "Output files")
  set(fuzz_image_SOURCES ${PIXSUM_FUZZ_DIR}/fuzz_image.c ${fuzz_image_io}
      ${PROJECT_SOURCE_DIR}/tools/out_file.c)
  set(fuzz_image_LIBS pixsum_static m)
  set(fuzz_image_DEFS "")
  foreach(fmt PNG JPEG TIFF)
    if(PIXSUM_WITH_${fmt})
      find_package(${fmt} QUIET)
      if(${fmt}_FOUND)
        list(APPEND fuzz_image_LIBS ${fmt}::${fmt})
        list(APPEND fuzz_image_DEFS PIXSUM_HAVE_${fmt}=1)
      endif()
    endif()
  endforeach()
endif()

foreach(t IN LISTS PIXSUM_FUZZ_TARGETS)
  set(variants ${t}_replay)
  if(PIXSUM_FUZZ)
    list(APPEND variants ${t}_fuzzer)
  endif()
  foreach(exe IN LISTS variants)
    if(exe MATCHES "_replay$")
      add_executable(${exe} ${${t}_SOURCES} ${PIXSUM_FUZZ_DIR}/fuzz_replay.c)
    else()
      add_executable(${exe} ${${t}_SOURCES})
      target_link_options(${exe} PRIVATE -fsanitize=fuzzer)
    endif()
    target_compile_options(${exe} PRIVATE ${PIXSUM_WARNINGS} -Wno-missing-prototypes)
    target_compile_definitions(${exe} PRIVATE _GNU_SOURCE ${${t}_DEFS})
    target_include_directories(${exe} PRIVATE ${PROJECT_SOURCE_DIR}/tools
                               ${PROJECT_SOURCE_DIR}/src)
    target_link_libraries(${exe} PRIVATE ${${t}_LIBS})
  endforeach()
  add_test(NAME ${t}_corpus COMMAND ${t}_replay ${PIXSUM_FUZZ_DIR}/corpus/${t})
  set_tests_properties(${t}_corpus PROPERTIES LABELS "fuzz" TIMEOUT 300
                       ENVIRONMENT "OMP_WAIT_POLICY=passive")
endforeach()
