# Recording stand-in for CPM.cmake (see README.md): the keyword form only.
include_guard(GLOBAL)
include(${CMAKE_CURRENT_LIST_DIR}/_pinprobe_record.cmake)

function(CPMAddPackage)
  cmake_parse_arguments(_cpm "" "NAME" "" ${ARGN})
  string(TOLOWER "${_cpm_NAME}" _lc)
  get_property(_have GLOBAL PROPERTY _pinprobe_cpm_${_lc} SET)
  if(_have)
    return()
  endif()
  set_property(GLOBAL PROPERTY _pinprobe_cpm_${_lc} TRUE)
  _pinprobe_record(cpm "${_cpm_NAME}" ${ARGN})
endfunction()
