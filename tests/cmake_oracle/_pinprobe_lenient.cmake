# For the sdist corpus only (tests/cmake/cmake_corpus.rs), loaded at the first project() through
# CMAKE_PROJECT_TOP_LEVEL_INCLUDES. The recording stand-ins download nothing, so a configuration
# that goes on to use what it fetched (a LICENSE file, a target, a configure script) would stop
# at its first use and never reach the fetches after it. Here such a stop is turned into an
# error that lets CMake go on: `message(FATAL_ERROR ...)` becomes `message(SEND_ERROR ...)`, and a
# `find_package(... REQUIRED)` that finds nothing goes on as not found. Each one is appended to
# `${PINPROBE_ORACLE_OUT}.stops`, so the test can show where a real configuration would have
# stopped.
include_guard(GLOBAL)

function(message)
  if(ARGC GREATER 0 AND "${ARGV0}" STREQUAL "FATAL_ERROR")
    list(REMOVE_AT ARGV 0)
    string(JOIN "" _text ${ARGV})
    string(REPLACE "\n" " " _line "${_text}")
    file(APPEND "${PINPROBE_ORACLE_OUT}.stops" "${CMAKE_CURRENT_LIST_FILE}: message(FATAL_ERROR ${_line})\n")
    _message(SEND_ERROR "${_text}")
  else()
    _message(${ARGV})
  endif()
endfunction()

macro(find_package)
  set(_pp_fp_args "${ARGV}")
  list(FIND _pp_fp_args REQUIRED _pp_fp_required)
  if(_pp_fp_required GREATER -1)
    list(REMOVE_AT _pp_fp_args ${_pp_fp_required})
  endif()
  _find_package(${_pp_fp_args})
  if(_pp_fp_required GREATER -1 AND NOT ${ARGV0}_FOUND)
    file(APPEND "${PINPROBE_ORACLE_OUT}.stops" "${CMAKE_CURRENT_LIST_FILE}: find_package(${ARGV0} REQUIRED) found nothing\n")
  endif()
endmacro()

# Commands the fetched content would have defined (`nanobind_add_module` after nanobind is made
# available): with the content empty they are unknown, which stops CMake for good. Each one
# named in PINPROBE_STUB_COMMANDS is defined to do nothing.
# Listed as `NAME=target`, the command makes a library target named by its first argument (an
# empty source file), since what follows links to it and sets its properties.
function(_pinprobe_stub_target name)
  get_property(_langs GLOBAL PROPERTY ENABLED_LANGUAGES)
  set(_src "${CMAKE_BINARY_DIR}/_pinprobe_stub.c")
  if(NOT "C" IN_LIST _langs)
    set(_src "${CMAKE_BINARY_DIR}/_pinprobe_stub.cpp")
  endif()
  file(TOUCH "${_src}")
  add_library(${name} MODULE "${_src}")
endfunction()
foreach(_pp_stub IN LISTS PINPROBE_STUB_COMMANDS)
  string(REPLACE "=" ";" _pp_stub_parts "${_pp_stub}")
  list(GET _pp_stub_parts 0 _pp_stub_name)
  if(NOT COMMAND "${_pp_stub_name}")
    if(_pp_stub MATCHES "=target$")
      cmake_language(EVAL CODE "function(${_pp_stub_name} name)\n_pinprobe_stub_target(\${name})\nendfunction()")
    else()
      cmake_language(EVAL CODE "function(${_pp_stub_name})\nendfunction()")
    endif()
  endif()
endforeach()
