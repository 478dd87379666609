# find_package(Kiln): compile ONNX models through kilnd at build time and link them like any
# library.
#
#   find_package(Kiln REQUIRED)
#   kiln_add_model(my_model model.onnx [SERVER host:port] [OPT_LEVEL n] [DEADLINE 2m]
#                  [TARGET_TRIPLE triple] [CPU name] [INPUT_SHAPES name=d0,d1 ...])
#   target_link_libraries(app PRIVATE my_model)   # then #include "kiln_model.h"
#
# kiln_add_model runs the installed `kiln compile` (a gRPC client: the build machine needs no
# engine, only a reachable kilnd: SERVER, else the KILN_SERVER variable, else the environment's
# KILN_SERVER, else 127.0.0.1:50051) when the model file changes, and makes a static library
# of the object artifact whose include directory holds the header artifact (kiln_model.h, the
# C ABI of engine/runtime/kiln_runtime.h). An unchanged model runs nothing; a model rebuilt
# with the same bytes (or a fresh build directory) is answered from kilnd's caches by its compile
# id (the digest of the request) without compiling. One model per program: every model's
# symbols are kiln_model_*.
cmake_minimum_required(VERSION 3.20)
include(CMakeFindDependencyMacro)
find_dependency(Threads)

get_filename_component(_kiln_prefix "${CMAKE_CURRENT_LIST_DIR}/../../.." ABSOLUTE)
set(KILN_CLI "${_kiln_prefix}/bin/kiln" CACHE FILEPATH "The kiln command-line client")

if(NOT TARGET Kiln::runtime)
  add_library(Kiln::runtime STATIC IMPORTED)
  set(_kiln_runtime_links m Threads::Threads)
  # Vector math of x86-64 code calls glibc's libmvec (docs/native-code.md).
  if(CMAKE_SYSTEM_PROCESSOR MATCHES "x86_64|AMD64" AND CMAKE_SYSTEM_NAME STREQUAL "Linux")
    list(PREPEND _kiln_runtime_links mvec)
  endif()
  set_target_properties(Kiln::runtime PROPERTIES
    IMPORTED_LOCATION "${_kiln_prefix}/lib/libkiln_rt.a"
    INTERFACE_INCLUDE_DIRECTORIES "${_kiln_prefix}/include/kiln"
    INTERFACE_LINK_LIBRARIES "${_kiln_runtime_links}")
endif()

function(kiln_add_model target model)
  cmake_parse_arguments(PARSE_ARGV 2 ARG "" "SERVER;OPT_LEVEL;DEADLINE;TARGET_TRIPLE;CPU"
                        "INPUT_SHAPES")
  if(ARG_UNPARSED_ARGUMENTS)
    message(FATAL_ERROR "kiln_add_model(${target}): unknown arguments ${ARG_UNPARSED_ARGUMENTS}")
  endif()
  set(server "${ARG_SERVER}")
  if(NOT server)
    set(server "${KILN_SERVER}")
  endif()
  if(NOT server AND DEFINED ENV{KILN_SERVER})
    set(server "$ENV{KILN_SERVER}")
  endif()
  if(NOT server)
    set(server "127.0.0.1:50051")
  endif()
  if(NOT ARG_DEADLINE)
    set(ARG_DEADLINE 5m)
  endif()
  get_filename_component(model_path "${model}" ABSOLUTE BASE_DIR "${CMAKE_CURRENT_SOURCE_DIR}")
  set(out "${CMAKE_CURRENT_BINARY_DIR}/${target}.kiln")
  set(args compile "${model_path}" "--server=${server}" --artifacts=object,header "--out=${out}"
           "--deadline=${ARG_DEADLINE}")
  if(ARG_OPT_LEVEL)
    list(APPEND args "--opt-level=${ARG_OPT_LEVEL}")
  endif()
  if(ARG_TARGET_TRIPLE)
    list(APPEND args "--target=${ARG_TARGET_TRIPLE}")
  endif()
  if(ARG_CPU)
    list(APPEND args "--cpu=${ARG_CPU}")
  endif()
  foreach(shape IN LISTS ARG_INPUT_SHAPES)
    list(APPEND args "--input-shape=${shape}")
  endforeach()
  add_custom_command(
    OUTPUT "${out}/kiln_model.o" "${out}/kiln_model.h"
    COMMAND "${KILN_CLI}" ${args}
    DEPENDS "${model_path}"
    COMMENT "Kiln: compiling ${model} through kilnd at ${server}"
    VERBATIM)
  add_library(${target} STATIC "${out}/kiln_model.o" "${out}/kiln_model.h")
  set_target_properties(${target} PROPERTIES LINKER_LANGUAGE C)
  target_include_directories(${target} INTERFACE "${out}")
  target_link_libraries(${target} INTERFACE Kiln::runtime)
endfunction()
