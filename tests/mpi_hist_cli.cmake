# mpi_hist_cli.cmake - end-to-end tests of `mpirun -np N pixsum hist ... --mpi`
# and of the ranks' direct TIFF reads. Included by tests/CMakeLists.txt, it
# registers the tests; run with -P (by those tests), it is the test itself:
#   1. writes u8 and u16 PGMs (1031 x 1099 rows, uneven over 2-4 ranks; a
#      striped TIFF of them has 2 or 3 strips, so ranks start inside
#      different strips), a 5 x 2 one (3 or 4 ranks leave ranks without rows)
#      with a 0/1 mask, and an RGB PPM; an f32 image is the single-process
#      f32 integral table of the u8 one;
#   2. converts them to .npy, striped TIFF and tiled BigTIFF;
#   3. `pixsum hist` in one process (reference) and with --mpi on NP ranks,
#      with several option sets (default bins, the data-range default of
#      f32, given bins and range, cumulative, relative, JSON, --channel,
#      --mask, -o): the outputs must be identical byte for byte;
#   4. `pixsum integral --mpi` of the striped and tiled TIFFs against the
#      single-process table (the .npy data after the header);
#   5. errors: same exit status on every rank;
#   6. direct TIFF access: a rank never decodes a strip before its rows.
if(CMAKE_SCRIPT_MODE_FILE)
  include(${CMAKE_CURRENT_LIST_DIR}/cli/mpi_script_lib.cmake)
  # hist in one process and on NP ranks, stdout compared. `name` tags the files.
  function(hist_same name input)
    run_to(${WORK}/${name}.ref ${PIXSUM} hist ${input} ${ARGN})
    run_to(${WORK}/${name}.mpi ${MPI} ${PIXSUM} hist ${input} ${ARGN} --mpi)
    same_file(${WORK}/${name}.ref ${WORK}/${name}.mpi)
  endfunction()

  file(MAKE_DIRECTORY ${WORK})
  set(MPI ${MPIEXEC} -n ${NP} --oversubscribe)

  # Binary PGMs whose bytes are printable characters (CMake writes text): every
  # row a different rotation of a 97-character cycle, so rows and columns vary.
  set(cycle "")
  foreach(i RANGE 32 126)
    string(ASCII ${i} c)
    string(APPEND cycle "${c}")
  endforeach()
  string(APPEND cycle "AB") # 97 characters: a prime, rotations all differ
  set(W 1031)
  set(H 1099) # uneven over 2, 3 and 4 ranks
  string(REPEAT "${cycle}" 24 long) # 2328 >= 2 x W + 97
  set(u8 "")
  set(u16 "")
  foreach(y RANGE 1 ${H})
    math(EXPR at "(${y} * 37) % 97")
    string(SUBSTRING "${long}" ${at} ${W} row)
    string(APPEND u8 "${row}")
    math(EXPR at2 "(${y} * 11) % 97")
    math(EXPR w2 "2 * ${W}")
    string(SUBSTRING "${long}" ${at2} ${w2} row2)
    string(APPEND u16 "${row2}")
  endforeach()
  file(WRITE ${WORK}/u8.pgm "P5\n${W} ${H}\n255\n${u8}")
  file(WRITE ${WORK}/u16.pgm "P5\n${W} ${H}\n65535\n${u16}")
  file(WRITE ${WORK}/tiny.pgm "P2\n5 2\n255\n0 1 2 250 255\n9 0 9 0 128\n")
  file(WRITE ${WORK}/tinymask.pgm "P2\n5 2\n255\n1 0 1 1 1\n1 1 0 1 0\n")
  set(ppm "P3\n7 9\n255\n")
  foreach(y RANGE 1 9)
    foreach(x RANGE 1 7)
      math(EXPR r "(${x} * 31 + ${y} * 17) % 256")
      math(EXPR g "(${x} * ${y} * 13) % 256")
      math(EXPR b "(${x} + ${y} * 7) % 256")
      string(APPEND ppm "${r} ${g} ${b} ")
    endforeach()
    string(APPEND ppm "\n")
  endforeach()
  file(WRITE ${WORK}/rgb.ppm "${ppm}")
  run_ok(${PIXSUM} integral ${WORK}/u8.pgm -o ${WORK}/f32.npy --type f32)
  run_ok(${PIXSUM} convert ${WORK}/u8.pgm ${WORK}/u8.npy)
  run_ok(${PIXSUM} convert ${WORK}/u8.pgm ${WORK}/u8.tif)
  run_ok(${PIXSUM} convert ${WORK}/u16.pgm ${WORK}/u16.tif)
  run_ok(${PIXSUM} convert ${WORK}/u16.pgm ${WORK}/u16_tiled.tif --tile 16 --bigtiff)
  run_ok(${PIXSUM} convert ${WORK}/f32.npy ${WORK}/f32_tiled.tif --tile 32 --bigtiff)
  run_ok(${PIXSUM} convert ${WORK}/tiny.pgm ${WORK}/tiny.tif)
  run_ok(${PIXSUM} convert ${WORK}/tinymask.pgm ${WORK}/tinymask.npy)
  run_ok(${PIXSUM} convert ${WORK}/rgb.ppm ${WORK}/rgb.tif --tile 16)

  # Each mpirun costs about half a second here: one run per case, each case
  # covering several things. Striped TIFF (2 strips), integer range options:
  hist_same(u8_tif ${WORK}/u8.tif --bins 37 --range 40:120.5 --cumulative)
  # .npy by MPI-IO, default 256 bins, JSON:
  hist_same(u8_npy ${WORK}/u8.npy --format json)
  # u16, 65536 default bins, tiled BigTIFF:
  hist_same(u16_tiled ${WORK}/u16_tiled.tif)
  # f32 range from the data (global min/max over the ranks), .npy and tiled TIFF:
  hist_same(f32_npy ${WORK}/f32.npy --format json)
  hist_same(f32_tiled ${WORK}/f32_tiled.tif --bins 1000 --cumulative --relative)
  # 5 x 2 image: with 3 or 4 ranks some have no rows; the mask is read as strips.
  hist_same(tiny_mask ${WORK}/tiny.tif --mask ${WORK}/tinymask.npy --bins 8 --format json)
  # 3 channels, one printed; JSON through -o (temporary + rename).
  run_ok(${PIXSUM} hist ${WORK}/rgb.tif --channel 1 --format json -o ${WORK}/rgb_ref.json)
  run_ok(${MPI} ${PIXSUM} hist ${WORK}/rgb.tif --channel 1 --format json
         -o ${WORK}/rgb_mpi.json --mpi -v)
  same_file(${WORK}/rgb_ref.json ${WORK}/rgb_mpi.json)

  # integral --mpi of TIFF inputs: striped (3 strips) and tiled, each rank
  # decoding only its strips/tiles.
  run_ok(${PIXSUM} integral ${WORK}/u16.tif -o ${WORK}/u16_ref.npy --type u64)
  run_ok(${MPI} ${PIXSUM} integral ${WORK}/u16.tif -o ${WORK}/u16_mpi.npy --type u64 --mpi)
  same_data(${WORK}/u16_ref.npy ${WORK}/u16_mpi.npy)
  run_ok(${PIXSUM} integral ${WORK}/f32_tiled.tif -o ${WORK}/f32_ref.npy --type f64 --padded)
  run_ok(${MPI} ${PIXSUM} integral ${WORK}/f32_tiled.tif -o ${WORK}/f32_mpi.npy --type f64
         --padded --mpi)
  same_data(${WORK}/f32_ref.npy ${WORK}/f32_mpi.npy)

  # Errors: the same status on every rank; nothing written. (With 2 and 4
  # ranks only: each run costs the CI half a second.)
  if(NP EQUAL 2 OR NP EQUAL 4)
    expect_rc(2 ${MPI} ${PIXSUM} hist ${WORK}/tiny.tif --channel 2 --mpi)
    expect_rc(1 ${MPI} ${PIXSUM} hist ${WORK}/tiny.tif --mask ${WORK}/u8.npy --mpi)
    expect_rc(1 ${MPI} ${PIXSUM} hist ${WORK}/tiny.tif --mpi -o ${WORK}/no/such/dir.csv)
    # a range too narrow for its bins: the library's refusal, on every rank
    expect_rc(1 ${MPI} ${PIXSUM} hist ${WORK}/f32.npy --range 0:1e-305 --bins 65536 --mpi)
    if(EXISTS ${WORK}/no)
      message(FATAL_ERROR "a failed run left ${WORK}/no behind")
    endif()
  endif()

  # Direct TIFF access: a deflate TIFF of 3 strips (508 rows each) whose first
  # strip is broken. With 2 ranks, rank 0 (rows 0-549) must fail on it and
  # rank 1 (rows 550-1098, strips 1 and 2) must not: it never decodes strip 0.
  find_program(DD dd)
  if(NP EQUAL 2 AND DD)
    execute_process(COMMAND ${PIXSUM} convert ${WORK}/u16.pgm ${WORK}/z.tif --compress deflate
                    RESULT_VARIABLE zrc OUTPUT_QUIET ERROR_QUIET)
    if(zrc EQUAL 0) # libtiff without zlib: nothing to test
      # classic TIFF: 8-byte header, then the first strip's zlib stream
      run_ok(${DD} if=/dev/zero of=${WORK}/z.tif bs=1 seek=8 count=16 conv=notrunc)
      foreach(cmd hist integral)
        set(args ${WORK}/z.tif --mpi)
        if(cmd STREQUAL integral)
          list(APPEND args -o ${WORK}/z.npy)
        endif()
        execute_process(COMMAND ${MPI} ${PIXSUM} ${cmd} ${args} RESULT_VARIABLE rc
                        OUTPUT_QUIET ERROR_VARIABLE err)
        if(NOT rc EQUAL 1 OR NOT err MATCHES "rank 0 of 2" OR err MATCHES "rank 1 of 2")
          message(FATAL_ERROR "${cmd}: rank 1 read the strip of rank 0 (or no error): "
                              "${rc}\n${err}")
        endif()
      endforeach()
    endif()
  endif()
  return()
endif()

include(${CMAKE_CURRENT_LIST_DIR}/cli/mpi_script_lib.cmake)
pixsum_add_mpi_script_tests(mpi_hist_cli ${CMAKE_CURRENT_LIST_FILE})
