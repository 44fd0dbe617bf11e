# The CUDA backend: runtime/kernels/cuda compiled into tsl_tensor when TSL_CUDA is ON, or
# AUTO and the toolkit is found. Defines TSL_HAVE_CUDA for the code that registers it.
set(TSL_HAVE_CUDA OFF)
if(NOT TSL_CUDA STREQUAL "OFF")
  include(CheckLanguage)
  check_language(CUDA)
  if(CMAKE_CUDA_COMPILER)
    set(TSL_HAVE_CUDA ON)
  elseif(TSL_CUDA STREQUAL "ON")
    message(FATAL_ERROR "TSL_CUDA=ON but no CUDA compiler (nvcc) was found")
  endif()
endif()

if(TSL_HAVE_CUDA)
  # sm_90 machine code (Hopper, the GPUs TSL is checked on) plus compute_90 PTX, which
  # the driver compiles for newer GPUs. Set CMAKE_CUDA_ARCHITECTURES to build others.
  if(NOT DEFINED CMAKE_CUDA_ARCHITECTURES)
    set(CMAKE_CUDA_ARCHITECTURES 90)
  endif()
  enable_language(CUDA)
  # CMake 3.25 does not know nvcc 13's flag for C++20.
  set(CMAKE_CUDA20_STANDARD_COMPILE_OPTION "-std=c++20")
  set(CMAKE_CUDA20_EXTENSION_COMPILE_OPTION "-std=c++20")
  find_package(CUDAToolkit REQUIRED)
  file(GLOB TSL_CUDA_SRC CONFIGURE_DEPENDS ${PROJECT_SOURCE_DIR}/runtime/kernels/cuda/*.cpp
       ${PROJECT_SOURCE_DIR}/runtime/kernels/cuda/*.cu)
  target_sources(tsl_tensor PRIVATE ${TSL_CUDA_SRC})
  set_target_properties(tsl_tensor PROPERTIES CUDA_ARCHITECTURES "${CMAKE_CUDA_ARCHITECTURES}"
                                              CUDA_STANDARD 20 CUDA_STANDARD_REQUIRED ON)
  # The runtime is linked statically (a binary runs wherever a driver is, and says so
  # where none is); cuBLAS, the toolkit's shared library, is opened on first use (Note
  # [cuBLAS opened on first use] in runtime/kernels/cuda/cuda_blas.cpp): its headers
  # only here, and the file found as a fallback for dlopen.
  target_link_libraries(tsl_tensor PUBLIC CUDA::cudart_static PRIVATE ${CMAKE_DL_LIBS})
  get_target_property(TSL_CUBLAS_INCLUDE CUDA::cublas INTERFACE_INCLUDE_DIRECTORIES)
  target_include_directories(tsl_tensor SYSTEM PRIVATE ${TSL_CUBLAS_INCLUDE})
  get_target_property(TSL_CUBLAS_LIBRARY CUDA::cublas IMPORTED_LOCATION)
  set_source_files_properties(${PROJECT_SOURCE_DIR}/runtime/kernels/cuda/cuda_blas.cpp
                              PROPERTIES COMPILE_DEFINITIONS "TSL_CUBLAS_PATH=\"${TSL_CUBLAS_LIBRARY}\"")
  # NVRTC (the fused kernels of FusionGroups, cuda_jit.cpp) likewise: its soname, and
  # the file found as the fallback.
  get_target_property(TSL_NVRTC_LIBRARY CUDA::nvrtc IMPORTED_LOCATION)
  set_source_files_properties(${PROJECT_SOURCE_DIR}/runtime/kernels/cuda/cuda_jit.cpp
                              PROPERTIES COMPILE_DEFINITIONS
                              "TSL_NVRTC_SONAME=\"libnvrtc.so.${CUDAToolkit_VERSION_MAJOR}\";TSL_NVRTC_PATH=\"${TSL_NVRTC_LIBRARY}\"")
  target_compile_definitions(tsl_options INTERFACE TSL_HAVE_CUDA=1)
  message(STATUS "TSL: CUDA backend on (nvcc ${CMAKE_CUDA_COMPILER_VERSION}, "
                 "architectures ${CMAKE_CUDA_ARCHITECTURES})")
else()
  message(STATUS "TSL: CUDA backend off")
endif()
