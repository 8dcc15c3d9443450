# What `cmake --install` and `cpack -G DEB` put where (issue 27; the decision
# and its reasons: spec-notes/provider.md "Install and package (issue 27)").
#
#   <prefix>/${UET_PROVIDER_DIR}/libuet-fi.so     component provider
#   <prefix>/share/man/man7/fi_uet.7.gz           component provider
#   <prefix>/bin/uet-decode, uet-inject, ...      component tools
#   <prefix>/bin/uet-mpi-bench (where MPI was found)  component mpi-bench
#
# The package (libfabric-uet) holds provider and tools under /usr whatever
# CMAKE_INSTALL_PREFIX is; uet-mpi-bench stays out of it (it would make a
# provider package depend on Open MPI). Test binaries have no install rule.
include(GNUInstallDirs)

# Where the libfabric we build against loads external providers from: the
# compiled-in default of FI_PROVIDER_PATH (configure's PROVDLDIR,
# $libdir/libfabric of its own prefix), read from the help text of its
# provider_path parameter inside the library; else pkg-config's libdir.
set(uet_fabric_lib "")
foreach(lib ${LIBFABRIC_LINK_LIBRARIES})
  if(lib MATCHES "libfabric\\.so")
    set(uet_fabric_lib "${lib}")
  endif()
endforeach()
set(uet_fabric_dir "")
if(uet_fabric_lib)
  get_filename_component(uet_fabric_lib "${uet_fabric_lib}" REALPATH)
  file(STRINGS "${uet_fabric_lib}" uet_fabric_help REGEX "Search for providers in specific path"
       LIMIT_COUNT 1)
  if(uet_fabric_help MATCHES "\\(default: ([^)]+)\\)")
    set(uet_fabric_dir "${CMAKE_MATCH_1}")
  endif()
endif()
if(NOT uet_fabric_dir)
  set(uet_fabric_dir "${LIBFABRIC_LIBDIR}/libfabric")
  message(STATUS "uet: no provider path found in ${uet_fabric_lib}; assuming ${uet_fabric_dir}")
endif()
set(UET_LIBFABRIC_PROVIDER_DIR "${uet_fabric_dir}" CACHE INTERNAL
    "Where the libfabric built against looks for external providers")

# The provider's directory relative to the install prefix: libfabric's own
# provider directory taken relative to libfabric's prefix (Debian 12:
# lib/x86_64-linux-gnu/libfabric). With the prefix libfabric has (/usr, and
# the package) it is where libfabric looks; under any other prefix (the
# default /usr/local, --prefix, DESTDIR) the same layout below that prefix,
# and FI_PROVIDER_PATH names it.
set(uet_default_provider_dir "${CMAKE_INSTALL_LIBDIR}/libfabric")
if(LIBFABRIC_PREFIX AND uet_fabric_dir MATCHES "^${LIBFABRIC_PREFIX}/")
  file(RELATIVE_PATH uet_default_provider_dir "${LIBFABRIC_PREFIX}" "${uet_fabric_dir}")
endif()
set(UET_PROVIDER_DIR "${uet_default_provider_dir}" CACHE STRING
    "Where libuet-fi.so installs, relative to the install prefix (an absolute path is \
neither moved by --prefix nor by cpack)")
if(IS_ABSOLUTE "${UET_PROVIDER_DIR}")
  set(uet_installed_dir "${UET_PROVIDER_DIR}")
else()
  set(uet_installed_dir "${CMAKE_INSTALL_PREFIX}/${UET_PROVIDER_DIR}")
endif()
if(uet_installed_dir STREQUAL uet_fabric_dir)
  message(STATUS "uet: install puts libuet-fi.so in ${uet_installed_dir}, where libfabric looks")
else()
  message(STATUS "uet: install puts libuet-fi.so in ${uet_installed_dir}; libfabric "
                 "(${uet_fabric_lib}) looks in ${uet_fabric_dir}: set "
                 "FI_PROVIDER_PATH=${uet_installed_dir}, or configure with "
                 "-DCMAKE_INSTALL_PREFIX=${LIBFABRIC_PREFIX}, or install the package (cpack -G DEB)")
endif()

install(TARGETS uet-fi LIBRARY DESTINATION "${UET_PROVIDER_DIR}" COMPONENT provider)
# Said at install time, with the prefix actually used (--prefix, DESTDIR).
install(CODE "
  set(uet_dir \"${UET_PROVIDER_DIR}\")
  if(NOT IS_ABSOLUTE \"\${uet_dir}\")
    set(uet_dir \"\${CMAKE_INSTALL_PREFIX}/\${uet_dir}\")
  endif()
  if(NOT \"\$ENV{DESTDIR}\" STREQUAL \"\" OR NOT uet_dir STREQUAL \"${uet_fabric_dir}\")
    message(STATUS \"uet: libfabric (${uet_fabric_lib}) loads providers from ${uet_fabric_dir}: \"
                   \"point FI_PROVIDER_PATH at \${uet_dir} (without DESTDIR) to use this one\")
  endif()" COMPONENT provider)

# The man page: rendered from docs/fi_uet.7.md where pandoc is installed (the
# `man` target's output), else the pre-rendered docs/fi_uet.7 (kept fresh by
# the docs.man_page_fresh test and the man-update target); gzipped as Debian
# ships man pages.
if(UET_PANDOC)
  set(uet_man_src ${uet_man})
else()
  set(uet_man_src ${PROJECT_SOURCE_DIR}/docs/fi_uet.7)
endif()
set(uet_man_gz ${PROJECT_BINARY_DIR}/docs/fi_uet.7.gz)
find_program(UET_GZIP gzip REQUIRED)
add_custom_command(OUTPUT ${uet_man_gz}
  COMMAND ${CMAKE_COMMAND} -E make_directory ${PROJECT_BINARY_DIR}/docs
  COMMAND sh -c "\"$0\" -9n -c \"$1\" > \"$2\"" ${UET_GZIP} ${uet_man_src} ${uet_man_gz}
  DEPENDS ${uet_man_src}
  VERBATIM)
add_custom_target(man-page ALL DEPENDS ${uet_man_gz})
install(FILES ${uet_man_gz} DESTINATION ${CMAKE_INSTALL_MANDIR}/man7 COMPONENT provider)

# man-update (with pandoc): docs/fi_uet.7 rendered again from docs/fi_uet.7.md,
# with the source's SHA-256 in its first line (cmake/man_page.cmake).
if(UET_PANDOC)
  add_custom_target(man-update
    COMMAND ${CMAKE_COMMAND} -DMODE=update -DMD=${PROJECT_SOURCE_DIR}/docs/fi_uet.7.md
            -DPAGE=${PROJECT_SOURCE_DIR}/docs/fi_uet.7 -DPANDOC=${UET_PANDOC}
            -P ${PROJECT_SOURCE_DIR}/cmake/man_page.cmake
    VERBATIM)
else()
  add_custom_target(man-update
    COMMAND ${CMAKE_COMMAND} -E echo "man-update needs pandoc (apt-get install pandoc)"
    COMMAND ${CMAKE_COMMAND} -E false
    VERBATIM)
endif()

# The tools. uet-mpi-bench only where MPI was found, and not in the package.
set(UET_INSTALL_TOOLS uet-decode uet-inject uet-sample-pcap uet-hmem-pingpong uet-tss-bench)
install(TARGETS ${UET_INSTALL_TOOLS} RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR} COMPONENT tools)
if(TARGET uet-mpi-bench)
  list(APPEND UET_INSTALL_TOOLS uet-mpi-bench)
  install(TARGETS uet-mpi-bench RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR} COMPONENT mpi-bench)
endif()

# The Debian package: `cpack -G DEB` in the build directory writes
# libfabric-uet_<version>-1_<arch>.deb. Dependencies from dpkg-shlibdeps
# (dpkg-dev) over what the files link.
set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGE_NAME libfabric-uet)
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGE_VENDOR "UET project")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY
    "Ultra Ethernet Transport (UET) over UDP: libfabric provider uet")
set(CPACK_PACKAGE_DESCRIPTION
    "A userspace implementation of the Ultra Ethernet Transport (UE Specification 1.0.1)
carried in UDP datagrams, as the libfabric provider `uet` (libuet-fi.so, in
libfabric's provider directory: fi_info -p uet finds it with no variable set),
its manual page fi_uet(7), and the tools uet-decode, uet-inject, uet-sample-pcap,
uet-hmem-pingpong and uet-tss-bench.")
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_STRIP_FILES ON)
# Only the provider and tools components, in one package.
set(CPACK_INSTALL_CMAKE_PROJECTS
    "${PROJECT_BINARY_DIR};${PROJECT_NAME};provider;/"
    "${PROJECT_BINARY_DIR};${PROJECT_NAME};tools;/")
set(CPACK_DEBIAN_PACKAGE_MAINTAINER "UET maintainers <uet@localhost>")
set(CPACK_DEBIAN_PACKAGE_SECTION net)
set(CPACK_DEBIAN_PACKAGE_RELEASE 1)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
# dpkg-shlibdeps asks only for the libfabric1 that has the symbols we call
# (>= 1.11.0); libfabric refuses a provider whose fi_version is newer than its
# own API, and the provider states the API of the headers it was built with.
set(CPACK_DEBIAN_PACKAGE_DEPENDS "libfabric1 (>= ${LIBFABRIC_VERSION})")
include(CPack)
