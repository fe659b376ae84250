# mpi_cli.cmake - end-to-end tests of `mpirun -np N pixsum integral ... --mpi`.
# Included by tests/CMakeLists.txt, it registers the tests; run with -P (by
# those tests), it is the test itself:
#   1. writes a P2 PGM (odd size, values 0..255 from a fixed formula),
#   2. the single-process CLI writes the padded table of it (reference),
#   3. N ranks write it with --mpi (streaming reader path for PGM; for the
#      same image as a tiled BigTIFF each rank decodes only its tiles): same
#      data,
#   4. that u32 table, a .npy, is the input of a second round (MPI-IO reader
#      path, u32 -> u64), again against the single-process CLI,
#   5. usage and runtime errors give the same exit status on every rank.
# The .npy headers of the two writers may differ in padding; the data after
# them must be identical byte for byte.
if(CMAKE_SCRIPT_MODE_FILE)
  include(${CMAKE_CURRENT_LIST_DIR}/cli/mpi_script_lib.cmake)

  file(MAKE_DIRECTORY ${WORK})
  set(W 37)
  set(H 23)
  set(pgm "P2\n${W} ${H}\n255\n")
  foreach(y RANGE 1 ${H})
    foreach(x RANGE 1 ${W})
      math(EXPR v "(${x} * 73 + ${y} * 151 + ${x} * ${y} * 7) % 256")
      string(APPEND pgm "${v} ")
    endforeach()
    string(APPEND pgm "\n")
  endforeach()
  file(WRITE ${WORK}/in.pgm "${pgm}")
  set(MPI ${MPIEXEC} -n ${NP} --oversubscribe)

  run_ok(${PIXSUM} integral ${WORK}/in.pgm -o ${WORK}/ref.npy --padded)
  run_ok(${MPI} ${PIXSUM} integral ${WORK}/in.pgm -o ${WORK}/out.npy --padded --mpi)
  same_data(${WORK}/ref.npy ${WORK}/out.npy)

  # The same image as a tiled BigTIFF: each rank decodes only the rows of
  # tiles that hold its rows (more TIFF cases: mpi_hist_cli.cmake).
  run_ok(${PIXSUM} convert ${WORK}/in.pgm ${WORK}/in.tif --tile 16 --bigtiff)
  run_ok(${MPI} ${PIXSUM} integral ${WORK}/in.tif -o ${WORK}/out_tif.npy --padded --mpi)
  same_data(${WORK}/ref.npy ${WORK}/out_tif.npy)

  run_ok(${PIXSUM} integral ${WORK}/out.npy -o ${WORK}/ref2.npy --type u64)
  run_ok(${MPI} ${PIXSUM} integral ${WORK}/out.npy -o ${WORK}/out2.npy --type u64 --mpi -v)
  same_data(${WORK}/ref2.npy ${WORK}/out2.npy)

  run_ok(${PIXSUM} integral ${WORK}/in.pgm -o ${WORK}/ref3.npy --type f64
         --squared ${WORK}/ref3sq.npy)
  run_ok(${MPI} ${PIXSUM} integral ${WORK}/in.pgm -o ${WORK}/out3.npy --type f64
         --squared ${WORK}/out3sq.npy --mpi)
  same_data(${WORK}/ref3.npy ${WORK}/out3.npy)
  same_data(${WORK}/ref3sq.npy ${WORK}/out3sq.npy)

  expect_rc(2 ${MPI} ${PIXSUM} integral ${WORK}/in.pgm -o ${WORK}/out.tif --mpi)
  expect_rc(1 ${MPI} ${PIXSUM} integral ${WORK}/missing.npy -o ${WORK}/x.npy --mpi)
  # A table type the library refuses (u8): a usage error (2, as without --mpi
  # and as an unknown type name), every rank alike, and no file left behind.
  expect_rc(2 ${MPI} ${PIXSUM} integral ${WORK}/in.pgm -o ${WORK}/x.npy --type u8 --mpi)
  file(GLOB left ${WORK}/x.npy ${WORK}/.x.npy.*)
  if(left)
    message(FATAL_ERROR "a failed run left ${left} behind")
  endif()
  return()
endif()

include(${CMAKE_CURRENT_LIST_DIR}/cli/mpi_script_lib.cmake)
pixsum_add_mpi_script_tests(mpi_cli ${CMAKE_CURRENT_LIST_FILE})
