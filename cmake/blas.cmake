# The BLAS under matmul, linear, conv2d and their gradients (runtime/kernels/cpu/
# linalg_gemm.cpp, Note [GEMM through BLAS]). TSL_BLAS=AUTO uses Debian's single-threaded
# OpenBLAS (libopenblas-serial-dev) when it is installed, ON requires it, OFF keeps every
# product on Eigen. The serial build is the one TSL wants: TSL's own pool splits a large
# product between threads, so no second pool spins beside it. Debian does not build it
# with OpenBLAS's locking: TSL makes one call at a time (Note [GEMM through BLAS] in
# runtime/kernels/cpu/linalg_gemm.cpp). It picks its kernels for the running CPU at load
# time (DYNAMIC_ARCH), as TSL's own kernels do (cmake/cpu_capabilities.cmake).
set(TSL_BLAS "AUTO" CACHE STRING "GEMM through OpenBLAS (serial): AUTO, ON or OFF")
set_property(CACHE TSL_BLAS PROPERTY STRINGS AUTO ON OFF)

set(TSL_HAVE_BLAS OFF)
if(NOT TSL_BLAS STREQUAL "OFF")
  # The serial variant by its own folder: the plain libopenblas.so.0 is whichever variant
  # update-alternatives chose (the pthread one when both are installed).
  find_library(TSL_OPENBLAS_LIBRARY NAMES openblas
               PATHS /usr/lib/${CMAKE_LIBRARY_ARCHITECTURE}/openblas-serial NO_DEFAULT_PATH)
  find_path(TSL_OPENBLAS_INCLUDE cblas.h
            PATHS /usr/include/${CMAKE_LIBRARY_ARCHITECTURE}/openblas-serial NO_DEFAULT_PATH)
  if(TSL_OPENBLAS_LIBRARY AND TSL_OPENBLAS_INCLUDE)
    set(TSL_HAVE_BLAS ON)
  elseif(TSL_BLAS STREQUAL "ON")
    message(FATAL_ERROR "TSL_BLAS=ON but the serial OpenBLAS was not found "
                        "(apt-get install libopenblas-serial-dev)")
  endif()
endif()

if(TSL_HAVE_BLAS)
  message(STATUS "TSL: GEMM through ${TSL_OPENBLAS_LIBRARY}")
  target_include_directories(tsl_tensor SYSTEM PRIVATE ${TSL_OPENBLAS_INCLUDE})
  target_link_libraries(tsl_tensor PUBLIC ${TSL_OPENBLAS_LIBRARY})
  target_compile_definitions(tsl_tensor PRIVATE TSL_HAVE_BLAS=1)
  # The variants share one soname (libopenblas.so.0): linked by full path from a folder
  # outside the system's, the binaries get that folder as their run path (CMake's build
  # RPATH; INSTALL_RPATH_USE_LINK_PATH on tsl keeps it installed).
else()
  message(STATUS "TSL: GEMM on Eigen (TSL_BLAS=${TSL_BLAS})")
endif()
