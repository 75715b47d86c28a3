# libasc's private jemalloc (docs/decisions.md, "Build").
#
# Built from Debian's source package (scripts/setup.sh runs
# `apt-get source jemalloc` into /var/cache/libasc) as a static PIC
# archive with its own symbol prefix (asc_je_mallocx, asc_je_mallctl, ...),
# a private namespace for its internals, global-dynamic TLS and no C++
# operator new/delete.  It is linked into libasc and nothing of it is
# exported: loading libasc never changes the process's malloc or new, and
# needs no static TLS, so a dlopen()ed libasc (the Python extension) works.
#
# Out: the imported target asc_jemalloc (archive + generated headers).
# Sources include <jemalloc/jemalloc.h> after defining JEMALLOC_MANGLE, which
# maps mallocx, mallctl, ... onto the prefixed names.

set(ASC_JEMALLOC_SOURCE "" CACHE PATH
  "Debian jemalloc source tree (scripts/setup.sh fetches it)")
if(NOT ASC_JEMALLOC_SOURCE)
  file(GLOB _asc_je_trees LIST_DIRECTORIES true /var/cache/libasc/jemalloc-*)
  foreach(_dir ${_asc_je_trees})
    if(EXISTS ${_dir}/configure)
      set(ASC_JEMALLOC_SOURCE ${_dir})
    endif()
  endforeach()
endif()
if(NOT ASC_JEMALLOC_SOURCE OR NOT EXISTS ${ASC_JEMALLOC_SOURCE}/configure)
  message(FATAL_ERROR
    "libasc: jemalloc source not found in /var/cache/libasc; run scripts/setup.sh "
    "(or pass -DASC_JEMALLOC_SOURCE=DIR, an unpacked jemalloc source tree)")
endif()

# ASC_JEMALLOC_BUILT names the jemalloc/ folder of another build tree of
# this checkout: its archive and headers are used as they are instead of
# configuring and building the same sources again (scripts/test.sh's
# sanitizer, fuzz and Release builds reuse the first build's; the flags
# below never depend on the build type or the sanitizers).
set(ASC_JEMALLOC_BUILT "" CACHE PATH
  "A jemalloc/ folder another build tree of this checkout built (optional)")
if(ASC_JEMALLOC_BUILT)
  if(NOT EXISTS ${ASC_JEMALLOC_BUILT}/lib/libjemalloc_pic.a OR
     NOT EXISTS ${ASC_JEMALLOC_BUILT}/include/jemalloc/jemalloc.h)
    message(FATAL_ERROR
      "libasc: ASC_JEMALLOC_BUILT=${ASC_JEMALLOC_BUILT} holds no built "
      "jemalloc (lib/libjemalloc_pic.a and include/jemalloc/jemalloc.h)")
  endif()
  add_library(asc_jemalloc STATIC IMPORTED GLOBAL)
  set_target_properties(asc_jemalloc PROPERTIES
    IMPORTED_LOCATION ${ASC_JEMALLOC_BUILT}/lib/libjemalloc_pic.a
    INTERFACE_INCLUDE_DIRECTORIES ${ASC_JEMALLOC_BUILT}/include
    INTERFACE_LINK_LIBRARIES "Threads::Threads;m;${CMAKE_DL_LIBS}")
  return()
endif()

include(ExternalProject)
set(ASC_JE_DIR ${CMAKE_CURRENT_BINARY_DIR}/jemalloc)
set(ASC_JE_LIB ${ASC_JE_DIR}/lib/libjemalloc_pic.a)
# Sanitizer and warning flags of libasc are deliberately not passed: under
# ASan/TSan the sanitizer sees the blocks libasc hands out (memory.c poisons
# them itself), not jemalloc's internals.
ExternalProject_Add(asc_jemalloc_build
  SOURCE_DIR ${ASC_JEMALLOC_SOURCE}
  BINARY_DIR ${ASC_JE_DIR}
  CONFIGURE_COMMAND ${CMAKE_COMMAND} -E env CC=${CMAKE_C_COMPILER}
    "CFLAGS=-O2 -g -fPIC"
    ${ASC_JEMALLOC_SOURCE}/configure --quiet
      --with-jemalloc-prefix=asc_je_
      --with-private-namespace=asc_je_private_
      --disable-initial-exec-tls --disable-cxx --without-export
      --disable-doc --disable-stats --disable-prof --disable-libdl
  BUILD_COMMAND $(MAKE) -s build_lib_static
  INSTALL_COMMAND ""
  BUILD_BYPRODUCTS ${ASC_JE_LIB})

file(MAKE_DIRECTORY ${ASC_JE_DIR}/include)
add_library(asc_jemalloc STATIC IMPORTED GLOBAL)
set_target_properties(asc_jemalloc PROPERTIES
  IMPORTED_LOCATION ${ASC_JE_LIB}
  INTERFACE_INCLUDE_DIRECTORIES ${ASC_JE_DIR}/include
  INTERFACE_LINK_LIBRARIES "Threads::Threads;m;${CMAKE_DL_LIBS}")
add_dependencies(asc_jemalloc asc_jemalloc_build)
