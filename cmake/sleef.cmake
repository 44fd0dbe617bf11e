# SLEEF's vectorized 1.0-ulp exp, log, tanh, sin, ... under the Simd formulas
# (runtime/kernels/cpu/formulas.h, Note [Vector math]): the unfused kernels, the fused
# chunk loop and the compiled fusion kernels. TSL_SLEEF=AUTO uses Debian's libsleef-dev
# when it is installed, ON requires it, OFF keeps Eigen's functions. TSL calls the
# function of each instruction set by name (Sleef_expf8_u10avx2, ...) from each CPU
# capability's kernels, not SLEEF's own dispatcher.
set(TSL_SLEEF "AUTO" CACHE STRING "vector math through SLEEF: AUTO, ON or OFF")
set_property(CACHE TSL_SLEEF PROPERTY STRINGS AUTO ON OFF)

set(TSL_HAVE_SLEEF OFF)
set(TSL_JIT_LIBS "")
if(NOT TSL_SLEEF STREQUAL "OFF")
  find_library(TSL_SLEEF_LIBRARY NAMES sleef)
  find_path(TSL_SLEEF_INCLUDE sleef.h)
  if(TSL_SLEEF_LIBRARY AND TSL_SLEEF_INCLUDE)
    set(TSL_HAVE_SLEEF ON)
  elseif(TSL_SLEEF STREQUAL "ON")
    message(FATAL_ERROR "TSL_SLEEF=ON but SLEEF was not found (apt-get install libsleef-dev)")
  endif()
endif()

if(TSL_HAVE_SLEEF)
  message(STATUS "TSL: vector math through ${TSL_SLEEF_LIBRARY}")
  # On tsl_options, which every TSL target (the capability objects included) links: a
  # file that includes formulas.h sees the same definition everywhere.
  target_compile_definitions(tsl_options INTERFACE TSL_HAVE_SLEEF=1)
  target_include_directories(tsl_options SYSTEM INTERFACE ${TSL_SLEEF_INCLUDE})
  target_link_libraries(tsl_options INTERFACE ${TSL_SLEEF_LIBRARY})
  # Compiled fusion kernels include formulas.h too, and link SLEEF themselves
  # (runtime/fusion/native_compiler.cpp).
  set(TSL_JIT_LIBS "${TSL_SLEEF_LIBRARY}")
else()
  message(STATUS "TSL: vector math on Eigen (TSL_SLEEF=${TSL_SLEEF})")
endif()
