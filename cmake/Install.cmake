# `cmake --install`: the tools in bin/, the package and runtime libraries in lib/, their
# headers under include/tessel/{package,runtime}/, and a CMake package (lib/cmake/Tessel) so
# that another project's find_package(Tessel) gets Tessel::Runtime (with Tessel::Package),
# Tessel::tesselc and tessel_add_kernels().
include(CMakePackageConfigHelpers)

set_target_properties(TesselPackage PROPERTIES EXPORT_NAME Package)
set_target_properties(TesselRuntime PROPERTIES EXPORT_NAME Runtime)
install(TARGETS TesselPackage TesselRuntime EXPORT TesselTargets ARCHIVE DESTINATION lib)
foreach(layer package runtime)
  file(GLOB TESSEL_LAYER_HEADERS ${PROJECT_SOURCE_DIR}/${layer}/*.h)
  install(FILES ${TESSEL_LAYER_HEADERS} DESTINATION include/tessel/${layer})
endforeach()
# As built: their run path already names the LLVM/MLIR libraries they load.
foreach(tool tesselc tessel-opt tessel-translate tessel-interpret tessel-run tessel-plan)
  if(TARGET ${tool})
    install(PROGRAMS $<TARGET_FILE:${tool}> DESTINATION bin)
  endif()
endforeach()

install(EXPORT TesselTargets NAMESPACE Tessel:: DESTINATION lib/cmake/Tessel)
configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/TesselConfig.cmake.in
  ${PROJECT_BINARY_DIR}/TesselConfig.cmake INSTALL_DESTINATION lib/cmake/Tessel)
write_basic_package_version_file(${PROJECT_BINARY_DIR}/TesselConfigVersion.cmake
  COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/TesselConfig.cmake
              ${PROJECT_BINARY_DIR}/TesselConfigVersion.cmake
              ${PROJECT_SOURCE_DIR}/cmake/TesselKernels.cmake
        DESTINATION lib/cmake/Tessel)
