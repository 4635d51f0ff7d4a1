# Shared by the stand-ins: parse content options and append one record line.
include_guard(GLOBAL)

function(_pinprobe_record command name)
  # URL is a list (mirrors tried in order); the other options are named so that the list ends
  # where the next option starts, as CMake's own parser has it.
  set(_pp_other
    PREFIX TMP_DIR STAMP_DIR LOG_DIR DOWNLOAD_DIR BINARY_DIR INSTALL_DIR SUBBUILD_DIR
    DOWNLOAD_COMMAND DOWNLOAD_EXTRACT_TIMESTAMP DOWNLOAD_NO_EXTRACT DOWNLOAD_NAME
    DOWNLOAD_NO_PROGRESS TIMEOUT INACTIVITY_TIMEOUT HTTP_USERNAME HTTP_PASSWORD HTTP_HEADER
    TLS_VERSION TLS_VERIFY TLS_CAINFO NETRC NETRC_FILE GIT_REMOTE_NAME GIT_SUBMODULES
    GIT_SUBMODULES_RECURSE GIT_SHALLOW GIT_PROGRESS GIT_CONFIG GIT_REMOTE_UPDATE_STRATEGY
    SVN_REPOSITORY SVN_REVISION HG_REPOSITORY HG_TAG CVS_REPOSITORY CVS_MODULE CVS_TAG
    UPDATE_COMMAND UPDATE_DISCONNECTED PATCH_COMMAND CONFIGURE_COMMAND CMAKE_COMMAND
    CMAKE_GENERATOR CMAKE_GENERATOR_PLATFORM CMAKE_GENERATOR_TOOLSET CMAKE_GENERATOR_INSTANCE
    CMAKE_ARGS CMAKE_CACHE_ARGS CMAKE_CACHE_DEFAULT_ARGS SOURCE_SUBDIR CONFIGURE_HANDLED_BY_BUILD
    BUILD_COMMAND BUILD_IN_SOURCE BUILD_ALWAYS BUILD_BYPRODUCTS BUILD_JOB_SERVER_AWARE
    INSTALL_COMMAND INSTALL_BYPRODUCTS INSTALL_JOB_SERVER_AWARE TEST_COMMAND TEST_BEFORE_INSTALL
    TEST_AFTER_INSTALL TEST_EXCLUDE_FROM_MAIN LOG_DOWNLOAD LOG_UPDATE LOG_PATCH LOG_CONFIGURE
    LOG_BUILD LOG_INSTALL LOG_TEST LOG_MERGED_STDOUTERR LOG_OUTPUT_ON_FAILURE USES_TERMINAL_DOWNLOAD
    USES_TERMINAL_UPDATE USES_TERMINAL_PATCH USES_TERMINAL_CONFIGURE USES_TERMINAL_BUILD
    USES_TERMINAL_INSTALL USES_TERMINAL_TEST DEPENDS EXCLUDE_FROM_ALL STEP_TARGETS
    INDEPENDENT_STEP_TARGETS LIST_SEPARATOR COMMAND FIND_PACKAGE_ARGS OVERRIDE_FIND_PACKAGE
    SYSTEM QUIET GITLAB_REPOSITORY GIT_TAG_TYPE OPTIONS DOWNLOAD_ONLY)
  cmake_parse_arguments(_pp "" "GIT_REPOSITORY;GIT_TAG;SOURCE_DIR;GITHUB_REPOSITORY;VERSION;NAME;URL_HASH;URL_MD5" "URL;${_pp_other}" ${ARGN})
  set(_repo "${_pp_GIT_REPOSITORY}")
  if(_repo STREQUAL "" AND NOT "${_pp_GITHUB_REPOSITORY}" STREQUAL "")
    set(_repo "https://github.com/${_pp_GITHUB_REPOSITORY}")
  endif()
  set(_tag "${_pp_GIT_TAG}")
  if(command STREQUAL "cpm" AND _tag STREQUAL "" AND NOT "${_pp_VERSION}" STREQUAL "")
    set(_tag "v${_pp_VERSION}")
  endif()
  set(_local "")
  if(_repo STREQUAL "" AND "${_pp_URL}" STREQUAL "")
    set(_local "${_pp_SOURCE_DIR}")
  endif()
  set(_hash "${_pp_URL_HASH}")
  if(_hash STREQUAL "" AND NOT "${_pp_URL_MD5}" STREQUAL "")
    set(_hash "MD5=${_pp_URL_MD5}")
  endif()
  file(APPEND "${PINPROBE_ORACLE_OUT}" "${command}|${name}|${_repo}|${_tag}|${_pp_URL}|${_local}|${_hash}\n")
endfunction()

function(_pinprobe_record_local command name dir)
  file(APPEND "${PINPROBE_ORACLE_OUT}" "${command}|${name}||||${dir}\n")
endfunction()

# With -DPINPROBE_ORACLE_POPULATE=ON (the sdist corpus): a fetched project is there but empty, so
# a configuration that goes on to read `<name>_SOURCE_DIR` finds a directory, as after a
# download of nothing, instead of an unset variable. Sets `<lc>_SOURCE_DIR` / `<lc>_BINARY_DIR` in
# the caller's caller (the stand-in's caller).
# Options: the content options, where `SOURCE_DIR` / `BINARY_DIR` name the directories.
macro(_pinprobe_populate_dirs name)
  if(PINPROBE_ORACLE_POPULATE)
    string(TOLOWER "${name}" _pp_lc)
    cmake_parse_arguments(_pp_dirs "" "SOURCE_DIR;BINARY_DIR" "" ${ARGN})
    set(_pp_src "${CMAKE_BINARY_DIR}/_deps/${_pp_lc}-src")
    set(_pp_bin "${CMAKE_BINARY_DIR}/_deps/${_pp_lc}-build")
    if(_pp_dirs_SOURCE_DIR)
      set(_pp_src "${_pp_dirs_SOURCE_DIR}")
    endif()
    if(_pp_dirs_BINARY_DIR)
      set(_pp_bin "${_pp_dirs_BINARY_DIR}")
    endif()
    file(MAKE_DIRECTORY "${_pp_src}" "${_pp_bin}")
    set(${_pp_lc}_SOURCE_DIR "${_pp_src}" PARENT_SCOPE)
    set(${_pp_lc}_BINARY_DIR "${_pp_bin}" PARENT_SCOPE)
  endif()
endmacro()
