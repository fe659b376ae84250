# PixsumOptional.cmake - resolves the AUTO/ON/OFF switches of the optional parts
# into PIXSUM_HAVE_<PART> (TRUE/FALSE). ON without the tools is a configure error.

function(pixsum_resolve part found)
  string(TOUPPER "${PIXSUM_${part}}" mode)
  if(mode STREQUAL "OFF" OR mode STREQUAL "FALSE" OR mode STREQUAL "0")
    set(PIXSUM_HAVE_${part} FALSE PARENT_SCOPE)
  elseif(${found})
    set(PIXSUM_HAVE_${part} TRUE PARENT_SCOPE)
  elseif(mode STREQUAL "ON" OR mode STREQUAL "TRUE" OR mode STREQUAL "1")
    message(FATAL_ERROR "PIXSUM_${part}=ON but its tools were not found")
  else()
    set(PIXSUM_HAVE_${part} FALSE PARENT_SCOPE)
  endif()
endfunction()

# CUDA: nvcc must be found and usable.
set(_cuda_found FALSE)
if(NOT PIXSUM_CUDA MATCHES "^(OFF|off|FALSE|0)$")
  include(CheckLanguage)
  if(NOT CMAKE_CUDA_COMPILER AND EXISTS /usr/local/cuda/bin/nvcc)
    set(CMAKE_CUDA_COMPILER /usr/local/cuda/bin/nvcc)
  endif()
  check_language(CUDA)
  if(CMAKE_CUDA_COMPILER)
    set(_cuda_found TRUE)
  endif()
endif()
pixsum_resolve(CUDA _cuda_found)
if(PIXSUM_HAVE_CUDA)
  if(NOT CMAKE_CUDA_ARCHITECTURES)
    # sm_90 machine code, and compute_75 PTX that the driver compiles once for
    # any older (or newer) card; one more machine-code target per card family
    # would multiply the build time of the kernels.
    set(CMAKE_CUDA_ARCHITECTURES 90-real 75-virtual)
  endif()
  enable_language(CUDA)
  find_package(CUDAToolkit REQUIRED)
endif()

set(_omp_found FALSE)
if(NOT PIXSUM_OPENMP MATCHES "^(OFF|off|FALSE|0)$")
  find_package(OpenMP COMPONENTS C QUIET)
  if(OpenMP_C_FOUND)
    set(_omp_found TRUE)
  endif()
endif()
pixsum_resolve(OPENMP _omp_found)

set(_gl_found FALSE)
if(NOT PIXSUM_GL MATCHES "^(OFF|off|FALSE|0)$")
  find_package(OpenGL QUIET COMPONENTS EGL OpenGL)
  if(OpenGL_EGL_FOUND AND OpenGL_OpenGL_FOUND
     AND EXISTS ${CMAKE_CURRENT_SOURCE_DIR}/src/gl/CMakeLists.txt)
    set(_gl_found TRUE)
  endif()
endif()
pixsum_resolve(GL _gl_found)

set(_py_found FALSE)
if(NOT PIXSUM_PYTHON MATCHES "^(OFF|off|FALSE|0)$"
   AND EXISTS ${CMAKE_CURRENT_SOURCE_DIR}/python/CMakeLists.txt)
  # Debian's interpreter (with python3-numpy), not a pyenv one first on PATH.
  if(NOT Python3_EXECUTABLE AND EXISTS /usr/bin/python3)
    set(Python3_EXECUTABLE /usr/bin/python3)
  endif()
  find_package(Python3 QUIET COMPONENTS Interpreter Development.Module NumPy)
  if(Python3_FOUND AND Python3_NumPy_FOUND)
    set(_py_found TRUE)
  endif()
endif()
pixsum_resolve(PYTHON _py_found)

set(_mpi_found FALSE)
if(NOT PIXSUM_MPI MATCHES "^(OFF|off|FALSE|0)$"
   AND EXISTS ${CMAKE_CURRENT_SOURCE_DIR}/src/mpi/CMakeLists.txt)
  find_package(MPI QUIET COMPONENTS C)
  if(MPI_C_FOUND)
    set(_mpi_found TRUE)
  endif()
endif()
pixsum_resolve(MPI _mpi_found)
