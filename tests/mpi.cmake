# mpi.cmake - runs the MPI tests (test_mpi*.c) under mpirun with 1 to 4 ranks.
# Included by tests/CMakeLists.txt after the test executables are defined.
# This machine may have fewer cores than ranks (--oversubscribe), and CI runs
# as root (Open MPI refuses that unless told).
if(PIXSUM_HAVE_MPI)
  set(_pixsum_mpi_env
      OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
      OMPI_MCA_rmaps_base_oversubscribe=1
      # Under AddressSanitizer: Open MPI's plug-ins leave allocations behind
      # after they are unloaded (no symbol to suppress them by), so leak
      # checking is off for these processes; memory errors are still caught.
      ASAN_OPTIONS=detect_leaks=0)
  file(GLOB _pixsum_mpi_tests CONFIGURE_DEPENDS ${CMAKE_CURRENT_SOURCE_DIR}/test_mpi*.c)
  foreach(src IN LISTS _pixsum_mpi_tests)
    get_filename_component(name ${src} NAME_WE)
    # The plain ctest entry (one process, MPI singleton) gets the same environment.
    set_tests_properties(${name} PROPERTIES ENVIRONMENT "${_pixsum_mpi_env}" LABELS mpi)
    if(NOT MPIEXEC_EXECUTABLE)
      continue() # no launcher: the one-process (singleton) entry still runs
    endif()
    foreach(np 1 2 3 4)
      add_test(NAME ${name}_np${np}
               COMMAND ${MPIEXEC_EXECUTABLE} ${MPIEXEC_NUMPROC_FLAG} ${np} --oversubscribe
                       ${MPIEXEC_PREFLAGS} $<TARGET_FILE:${name}> ${MPIEXEC_POSTFLAGS})
      set_tests_properties(${name}_np${np} PROPERTIES
          ENVIRONMENT "${_pixsum_mpi_env}" LABELS mpi TIMEOUT 600 SKIP_RETURN_CODE 77
          # Ranks oversubscribe the cores: do not run beside other MPI jobs.
          RESOURCE_LOCK pixsum_mpi PROCESSORS ${np})
    endforeach()
  endforeach()
endif()
