# ctest pds.cc_boundary (spec-notes/pds.md "CC boundary"): the PDS core, SES,
# TSS and uet/ know congestion control only through the engine's abstract
# hook. From pds/cc/ they may include controller.h (Controller, Factory) and
# receiver.h (ReceiverCc), nothing else: the algorithms and the factory by
# name are for whoever builds an engine (provider/, tests/, apps/).
# Usage: cmake -DUET_SOURCE_DIR=<repo> -P cc_boundary.cmake
cmake_minimum_required(VERSION 3.25)
if(NOT UET_SOURCE_DIR)
  message(FATAL_ERROR "cc_boundary.cmake: set UET_SOURCE_DIR")
endif()
set(allowed "pds/cc/controller.h" "pds/cc/receiver.h")
file(GLOB core_files
     ${UET_SOURCE_DIR}/pds/*.h ${UET_SOURCE_DIR}/pds/*.cc
     ${UET_SOURCE_DIR}/ses/*.h ${UET_SOURCE_DIR}/ses/*.cc
     ${UET_SOURCE_DIR}/tss/*.h ${UET_SOURCE_DIR}/tss/*.cc
     ${UET_SOURCE_DIR}/uet/*.h ${UET_SOURCE_DIR}/uet/*.cc)
list(LENGTH core_files n)
if(n EQUAL 0)
  message(FATAL_ERROR "cc_boundary.cmake: no sources under ${UET_SOURCE_DIR}")
endif()
set(broken "")
foreach(f IN LISTS core_files)
  file(STRINGS ${f} includes REGEX "^[ \t]*#[ \t]*include[ \t]*[\"<]pds/cc/")
  foreach(line IN LISTS includes)
    string(REGEX REPLACE "^[ \t]*#[ \t]*include[ \t]*[\"<]([^\">]*)[\">].*" "\\1" header "${line}")
    if(NOT header IN_LIST allowed)
      file(RELATIVE_PATH rel ${UET_SOURCE_DIR} ${f})
      list(APPEND broken "${rel} includes ${header}")
    endif()
  endforeach()
endforeach()
if(broken)
  list(JOIN broken "\n  " text)
  message(FATAL_ERROR "CC boundary broken (only pds/cc/controller.h and receiver.h may be "
                      "included here; take a cc::Factory instead):\n  ${text}")
endif()
message(STATUS "CC boundary holds: ${n} files checked")
