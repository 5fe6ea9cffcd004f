# tessel_add_kernels(<target> SOURCES a.tsl [b.tsl ...] [ARCH sm_90]
#                    [DEFINES NAME=VALUE ...] [SUFFIX _bf16] [CUBIN])
# Compiles each .tsl file with tesselc when it changes, into
# <build dir>/tessel_kernels/<name><SUFFIX>.tslpkg, before <target> builds, and gives
# <target> the folder as TESSEL_KERNELS_DIR (a string macro) to load them from.
# CUBIN also stores ptxas's machine code for ARCH (tesselc --cubin; needs the CUDA
# toolkit's ptxas): a GPU of exactly that arch then loads without the driver's PTX JIT.
function(tessel_add_kernels target)
  cmake_parse_arguments(ARG "CUBIN" "ARCH;SUFFIX" "SOURCES;DEFINES" ${ARGN})
  if(NOT TARGET Tessel::tesselc)
    message(FATAL_ERROR "tessel_add_kernels: this Tessel install has no tesselc")
  endif()
  if(NOT ARG_SOURCES)
    message(FATAL_ERROR "tessel_add_kernels(${target}): no SOURCES")
  endif()
  if(NOT ARG_ARCH)
    set(ARG_ARCH sm_90)
  endif()
  set(dir ${CMAKE_CURRENT_BINARY_DIR}/tessel_kernels)
  set(defines)
  foreach(define ${ARG_DEFINES})
    list(APPEND defines -D ${define})
  endforeach()
  set(cubin)
  if(ARG_CUBIN)
    set(cubin --cubin)
  endif()
  set(packages)
  foreach(source ${ARG_SOURCES})
    get_filename_component(path ${source} ABSOLUTE)
    get_filename_component(name ${source} NAME_WE)
    set(package ${dir}/${name}${ARG_SUFFIX}.tslpkg)
    add_custom_command(OUTPUT ${package}
      COMMAND ${CMAKE_COMMAND} -E make_directory ${dir}
      COMMAND Tessel::tesselc ${path} --arch ${ARG_ARCH} ${cubin} ${defines} -o ${package}
      DEPENDS ${path} Tessel::tesselc
      COMMENT "tesselc ${source}"
      VERBATIM)
    list(APPEND packages ${package})
  endforeach()
  add_custom_target(${target}_tessel_kernels${ARG_SUFFIX} DEPENDS ${packages})
  add_dependencies(${target} ${target}_tessel_kernels${ARG_SUFFIX})
  target_compile_definitions(${target} PRIVATE TESSEL_KERNELS_DIR="${dir}")
endfunction()
