# The installed package: what a C++ program or a chip kernel library outside
# this tree builds against (docs/internals/packaging.md).
#
#   <includedir>/simpler/<module>/*.h      every module's headers, as real files, but for a
#                                          module's internal/ (its machinery: never included
#                                          by a program or a kernel)
#   <libdir>/libsimpler_<module>.a         the modules (position-independent)
#   <libdir>/cmake/simpler/                simplerConfig.cmake: find_package(simpler CONFIG)
#
# find_package(simpler CONFIG) gives simpler::core (the host runtime: every
# module, with the threads, dl and rt it needs; MPI and BLAS are loaded at run
# time, libsimpler_mpi.so beside the libraries) and simpler::kernel (the chip ABI headers,
# nothing to link).
# Under scikit-build-core the dirs are inside the Python package, beside the
# extension (CMakeLists.txt), where simpler.get_include() and
# simpler.get_cmake_dir() find them.
include(CMakePackageConfigHelpers)

set(simpler_src_root "${PROJECT_SOURCE_DIR}/src/simpler")
install(DIRECTORY "${simpler_src_root}/"
        DESTINATION "${SIMPLER_INSTALL_INCLUDEDIR}/simpler"
        FILES_MATCHING PATTERN "*.h"
        PATTERN "mpi" EXCLUDE
        PATTERN "internal" EXCLUDE)
if(SIMPLER_WITH_MPI)
  install(DIRECTORY "${simpler_src_root}/remote/mpi/"
          DESTINATION "${SIMPLER_INSTALL_INCLUDEDIR}/simpler/remote/mpi"
          FILES_MATCHING PATTERN "*.h")
endif()

set(simpler_installed_targets simpler_core simpler_kernel)
foreach(module IN LISTS SIMPLER_MODULES)
  list(APPEND simpler_installed_targets simpler_${module})
endforeach()
install(TARGETS ${simpler_installed_targets}
        EXPORT simplerTargets
        ARCHIVE DESTINATION "${SIMPLER_INSTALL_LIBDIR}")
# The MPI shim (src/CMakeLists.txt), the one file that links MPI.
if(TARGET simpler_mpi)
  install(TARGETS simpler_mpi LIBRARY DESTINATION "${SIMPLER_INSTALL_LIBDIR}")
endif()
# Under GCC with LTO the modules are fat objects (CMakeLists.txt): the
# extension links their LTO bytecode, and the installed copies keep only the
# machine code, so a program links them with any compiler or GCC version and
# without LTO.
if(SIMPLER_FAT_LTO_OBJECTS)
  if(NOT CMAKE_OBJCOPY)
    message(FATAL_ERROR "installing LTO-built static libraries needs objcopy (binutils) to strip the LTO bytecode")
  endif()
  foreach(module IN LISTS SIMPLER_MODULES)
    set(archive "${SIMPLER_INSTALL_LIBDIR}/$<TARGET_FILE_NAME:simpler_${module}>")
    install(CODE "
      set(archive \"\$ENV{DESTDIR}\${CMAKE_INSTALL_PREFIX}/${archive}\")
      execute_process(COMMAND \"${CMAKE_OBJCOPY}\" --remove-section=.gnu.lto_* --remove-section=.gnu.debuglto_*
                              \"\${archive}\" RESULT_VARIABLE rc)
      if(NOT rc EQUAL 0)
        message(FATAL_ERROR \"objcopy could not strip the LTO bytecode from \${archive}\")
      endif()")
  endforeach()
endif()
install(EXPORT simplerTargets
        NAMESPACE simpler::
        DESTINATION "${SIMPLER_INSTALL_CMAKEDIR}")

configure_package_config_file(
  "${CMAKE_CURRENT_LIST_DIR}/simplerConfig.cmake.in"
  "${PROJECT_BINARY_DIR}/simplerConfig.cmake"
  INSTALL_DESTINATION "${SIMPLER_INSTALL_CMAKEDIR}"
  PATH_VARS SIMPLER_INSTALL_INCLUDEDIR)
# 0.x: a minor version may change the C++ API.
write_basic_package_version_file(
  "${PROJECT_BINARY_DIR}/simplerConfigVersion.cmake"
  VERSION "${PROJECT_VERSION}"
  COMPATIBILITY SameMinorVersion)
install(FILES "${PROJECT_BINARY_DIR}/simplerConfig.cmake" "${PROJECT_BINARY_DIR}/simplerConfigVersion.cmake"
        DESTINATION "${SIMPLER_INSTALL_CMAKEDIR}")
