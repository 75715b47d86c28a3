# libasc_mpi (docs/distributed.md): an optional component over libasc,
# built when MPI is found.  libasc itself never links MPI.
#   ASC_WITH_MPI=AUTO  build it when find_package(MPI) finds a C MPI
#   ASC_WITH_MPI=ON    require it
#   ASC_WITH_MPI=OFF   never build it
set(ASC_WITH_MPI AUTO CACHE STRING "Build libasc_mpi: AUTO, ON or OFF")
set_property(CACHE ASC_WITH_MPI PROPERTY STRINGS AUTO ON OFF)

set(ASC_HAVE_MPI OFF)
if(NOT ASC_WITH_MPI STREQUAL "OFF")
  if(ASC_WITH_MPI STREQUAL "ON")
    find_package(MPI REQUIRED COMPONENTS C)
  else()
    find_package(MPI QUIET COMPONENTS C)
  endif()
  if(MPI_C_FOUND)
    set(ASC_HAVE_MPI ON)
  endif()
endif()
message(STATUS "libasc_mpi: ${ASC_HAVE_MPI} (ASC_WITH_MPI=${ASC_WITH_MPI})")
if(NOT ASC_HAVE_MPI)
  return()
endif()

file(GLOB ASC_MPI_SOURCES CONFIGURE_DEPENDS src/mpi/*.c)
add_library(asc_mpi SHARED ${ASC_MPI_SOURCES})
set_target_properties(asc_mpi PROPERTIES
  VERSION ${PROJECT_VERSION} SOVERSION ${PROJECT_VERSION_MAJOR}
  OUTPUT_NAME asc_mpi EXPORT_NAME mpi)
target_compile_options(asc_mpi PRIVATE ${ASC_WARNINGS})
target_compile_definitions(asc_mpi PRIVATE ASC_BUILDING_MPI)
target_include_directories(asc_mpi
  PUBLIC
    $<BUILD_INTERFACE:${CMAKE_CURRENT_SOURCE_DIR}/include>
    $<BUILD_INTERFACE:${ASC_GEN_DIR}>
    $<INSTALL_INTERFACE:${CMAKE_INSTALL_INCLUDEDIR}>
  PRIVATE ${CMAKE_CURRENT_SOURCE_DIR}/src)
# The shared libasc: one runtime per process, whoever loads it.  The
# runtime hook (src/runtime/extern_op.h) is exported from it for this.
target_link_libraries(asc_mpi PUBLIC asc MPI::MPI_C PRIVATE Threads::Threads)
add_library(asc::mpi ALIAS asc_mpi)

# Its own export set: find_package(asc) alone needs no MPI;
# find_package(asc COMPONENTS mpi) loads it (cmake/ascConfig.cmake.in).
install(TARGETS asc_mpi EXPORT ascMpiTargets
  LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR})
install(EXPORT ascMpiTargets NAMESPACE asc::
  DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/asc)
install(FILES include/asc/asc_mpi.h
  DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/asc)
string(REPLACE ";" " " ASC_MPI_PC_CFLAGS "${MPI_C_COMPILE_OPTIONS}")
foreach(dir ${MPI_C_INCLUDE_DIRS})
  string(APPEND ASC_MPI_PC_CFLAGS " -I${dir}")
endforeach()
set(ASC_MPI_PC_LIBS "")
foreach(lib ${MPI_C_LIBRARIES})
  string(APPEND ASC_MPI_PC_LIBS " ${lib}")
endforeach()
configure_file(cmake/asc-mpi.pc.in ${CMAKE_CURRENT_BINARY_DIR}/asc-mpi.pc @ONLY)
install(FILES ${CMAKE_CURRENT_BINARY_DIR}/asc-mpi.pc
  DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)

# ------------------------------------------------------------ MPI tests
# Run under mpirun with N ranks on this machine.  Root (CI containers)
# needs Open MPI's explicit consent; --oversubscribe lets 4 ranks share 2
# cores; one machine needs only the shared-memory and self transports
# (btl self,vader: the TCP transport's locks at MPI_Finalize are an
# inversion TSan reports, inside Open MPI).  ASC_SPIN_US=0: ranks share
# the cores, and a host thread spinning in ascStreamSynchronize would hold
# off the progress thread woken on its core (docs/distributed.md).  Under
# ASan, LeakSanitizer reads Open MPI's never-freed allocations as leaks:
# full unwinding and components kept loaded let tests/lsan-openmpi.supp
# name them.
set(ASC_MPIRUN ${MPIEXEC_EXECUTABLE} --oversubscribe ${MPIEXEC_PREFLAGS})
set(ASC_MPI_TEST_ENV
  "OMPI_ALLOW_RUN_AS_ROOT=1" "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1"
  "OMPI_MCA_btl_vader_single_copy_mechanism=none"
  "OMPI_MCA_mca_base_component_disable_dlclose=1"
  "OMPI_MCA_btl=self,vader"
  "ASC_SPIN_US=0"
  "ASAN_OPTIONS=detect_leaks=1:fast_unwind_on_malloc=0"
  "OMPI_MCA_rmaps_base_oversubscribe=1"
  "ASC_CACHE_DIR=${CMAKE_CURRENT_BINARY_DIR}/test-cache"
  "LSAN_OPTIONS=suppressions=${CMAKE_CURRENT_SOURCE_DIR}/tests/lsan-openmpi.supp:print_suppressions=0")

# asc_mpi_test(NAME CMD... NP n...): one ctest per rank count.
function(asc_mpi_test name)
  cmake_parse_arguments(T "" "" "COMMAND;NP" ${ARGN})
  foreach(np ${T_NP})
    add_test(NAME ${name}_np${np}
      COMMAND ${ASC_MPIRUN} ${MPIEXEC_NUMPROC_FLAG} ${np} ${T_COMMAND})
    set_tests_properties(${name}_np${np} PROPERTIES TIMEOUT 120
      LABELS mpi ENVIRONMENT "${ASC_MPI_TEST_ENV}" PROCESSORS 2)
  endforeach()
endfunction()

if(BUILD_TESTING)
  file(GLOB ASC_MPI_TESTS CONFIGURE_DEPENDS tests/mpi/test_*.c)
  foreach(src ${ASC_MPI_TESTS})
    get_filename_component(name ${src} NAME_WE)
    add_executable(${name} ${src})
    target_compile_options(${name} PRIVATE ${ASC_WARNINGS})
    target_compile_definitions(${name} PRIVATE
      ASC_TEST_MODULE_DIR="${ASC_TEST_MODULE_DIR}")
    target_link_libraries(${name} PRIVATE asc_mpi asc)
    if(ASC_TEST_MODULE_TARGETS)
      add_dependencies(${name} ${ASC_TEST_MODULE_TARGETS})
    endif()
    asc_mpi_test(${name} COMMAND $<TARGET_FILE:${name}> NP 2 4)
  endforeach()
  # Allreduces run blocking by default; ASC_MPI_BLOCKING_MAX=0 posts
  # every one (MPI_Iallreduce), the path this variant keeps tested.
  foreach(name test_mpi_coll test_mpi_order)
    if(TARGET ${name})
      add_test(NAME ${name}_posted_np2
        COMMAND ${ASC_MPIRUN} ${MPIEXEC_NUMPROC_FLAG} 2 $<TARGET_FILE:${name}>)
      set_tests_properties(${name}_posted_np2 PROPERTIES TIMEOUT 120
        LABELS mpi PROCESSORS 2
        ENVIRONMENT "${ASC_MPI_TEST_ENV};ASC_MPI_BLOCKING_MAX=0")
    endif()
  endforeach()
endif()

if(ASC_BUILD_EXAMPLES AND EXISTS ${CMAKE_CURRENT_SOURCE_DIR}/examples/mpi)
  add_executable(example_jacobi2d examples/mpi/jacobi2d.c)
  set_target_properties(example_jacobi2d PROPERTIES OUTPUT_NAME jacobi2d
    RUNTIME_OUTPUT_DIRECTORY ${CMAKE_CURRENT_BINARY_DIR}/examples)
  target_compile_options(example_jacobi2d PRIVATE ${ASC_WARNINGS})
  target_compile_definitions(example_jacobi2d PRIVATE
    ASC_SOURCE_DIR="${CMAKE_CURRENT_SOURCE_DIR}")
  target_link_libraries(example_jacobi2d PRIVATE asc::mpi m)
  if(BUILD_TESTING)
    # The same grid on 1, 2 and 4 ranks must give the same bits.
    add_test(NAME mpi_jacobi2d_ranks
      COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/tests/mpi/jacobi_ranks.sh
        $<TARGET_FILE:example_jacobi2d> ${MPIEXEC_EXECUTABLE})
    set_tests_properties(mpi_jacobi2d_ranks PROPERTIES TIMEOUT 180
      LABELS mpi ENVIRONMENT "${ASC_MPI_TEST_ENV}" PROCESSORS 2)
    # It compiles its kernels (uv_spawn forks): as for test_jit, TSan's
    # deadlock detector cannot follow jemalloc's atfork locks.
    if(ASC_SANITIZE MATCHES "thread")
      set_property(TEST mpi_jacobi2d_ranks APPEND PROPERTY ENVIRONMENT
        "TSAN_OPTIONS=detect_deadlocks=0 halt_on_error=1 suppressions=${CMAKE_CURRENT_SOURCE_DIR}/tests/tsan-libuv.supp")
    endif()
  endif()
endif()

if(ASC_BUILD_BENCH AND EXISTS ${CMAKE_CURRENT_SOURCE_DIR}/bench/mpi_allreduce.c)
  add_executable(bench_mpi_allreduce bench/mpi_allreduce.c)
  set_target_properties(bench_mpi_allreduce PROPERTIES
    OUTPUT_NAME mpi_allreduce
    RUNTIME_OUTPUT_DIRECTORY ${CMAKE_CURRENT_BINARY_DIR}/bench)
  target_compile_options(bench_mpi_allreduce PRIVATE ${ASC_WARNINGS})
  target_link_libraries(bench_mpi_allreduce PRIVATE asc::mpi)
  add_executable(bench_mpi_allreduce_loop bench/mpi_allreduce_loop.c)
  set_target_properties(bench_mpi_allreduce_loop PROPERTIES
    OUTPUT_NAME mpi_allreduce_loop
    RUNTIME_OUTPUT_DIRECTORY ${CMAKE_CURRENT_BINARY_DIR}/bench)
  target_compile_options(bench_mpi_allreduce_loop PRIVATE ${ASC_WARNINGS})
  target_link_libraries(bench_mpi_allreduce_loop PRIVATE asc::mpi)
endif()
