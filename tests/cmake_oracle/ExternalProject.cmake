# Recording stand-in for ExternalProject (see README.md).
include_guard(GLOBAL)
include(${CMAKE_CURRENT_LIST_DIR}/_pinprobe_record.cmake)

function(ExternalProject_Add name)
  _pinprobe_record(externalproject "${name}" ${ARGN})
endfunction()
