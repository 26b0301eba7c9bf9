# cmake -DCOMPILER=... -DINCLUDE_ROOT=... -DSOURCE=... -DEXPECT=PASS|FAIL -P check_compile.cmake
# Compiles SOURCE (syntax only) with INCLUDE_ROOT as its only project include
# directory. EXPECT=PASS: the compile must succeed. EXPECT=FAIL: it must fail
# with a missing-header error for a simpler/ header, and for nothing else.
execute_process(
  COMMAND "${COMPILER}" -std=c++20 -fsyntax-only -Wall -Wextra -Werror "-I${INCLUDE_ROOT}" "${SOURCE}"
  RESULT_VARIABLE rc
  OUTPUT_VARIABLE out
  ERROR_VARIABLE err)
if(EXPECT STREQUAL "PASS")
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "expected ${SOURCE} to compile against ${INCLUDE_ROOT}, it failed:\n${err}")
  endif()
elseif(EXPECT STREQUAL "FAIL")
  if(rc EQUAL 0)
    message(FATAL_ERROR "expected ${SOURCE} to fail to compile against ${INCLUDE_ROOT}, it compiled")
  endif()
  if(NOT err MATCHES "simpler/engine/[a-z_]+\\.h['\"]?: No such file or directory|'simpler/engine/[a-z_]+\\.h' file not found")
    message(FATAL_ERROR "expected a missing simpler/engine header, got:\n${err}")
  endif()
else()
  message(FATAL_ERROR "EXPECT must be PASS or FAIL")
endif()
