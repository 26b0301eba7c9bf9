# The serial OpenBLAS the standard chip kernels call (std.matmul's sgemm,
# docs/chip.md): Debian's libopenblas-serial-dev, which creates no threads. A
# chip is a forked process whose core threads each call sgemm; a pthread
# OpenBLAS would start its thread pool before the fork and oversubscribe the
# cores. The serial build's own directory (<libdir>/openblas-serial) is searched
# first, so it links even where the pthread build owns the libopenblas.so
# alternative.
#
# Defines simpler_OpenBLAS_FOUND and, when found, the imported target
# simpler::openblas (the library; SIMPLER_OPENBLAS_INCLUDE_DIR holds cblas.h).
# Included by the build (src/CMakeLists.txt) and by the installed
# simplerConfig.cmake, which ships this file beside it.
if(NOT TARGET simpler::openblas)
  find_library(SIMPLER_OPENBLAS_LIBRARY NAMES openblas PATH_SUFFIXES openblas-serial
               DOC "the serial OpenBLAS the standard chip kernels link")
  find_path(SIMPLER_OPENBLAS_INCLUDE_DIR cblas.h PATH_SUFFIXES openblas-serial openblas
            DOC "the directory of the serial OpenBLAS's cblas.h")
  if(SIMPLER_OPENBLAS_LIBRARY)
    add_library(simpler::openblas UNKNOWN IMPORTED)
    set_target_properties(simpler::openblas PROPERTIES IMPORTED_LOCATION "${SIMPLER_OPENBLAS_LIBRARY}")
  endif()
endif()
if(TARGET simpler::openblas)
  set(simpler_OpenBLAS_FOUND TRUE)
else()
  set(simpler_OpenBLAS_FOUND FALSE)
endif()
