# Install layout and Debian packages (issue 24): `cpack -G DEB` in the build folder writes
#   hpcprof_<version>_<arch>.deb      the CLI, the agent, the MPI wrapper module, docs, man
#                                     pages, bash completion; no Qt, for headless compute nodes;
#   hpcprof-gui_<version>_<arch>.deb  hpcprof-gui, which depends on hpcprof and on Qt 6.
# The layout under the prefix is what `hpcprof run` looks for (cli/agent_locator.cpp): the agent
# in ../lib next to bin/, the MPI module next to the agent.

# Docs for users, next to the man pages (the images are those the GUI guide shows).
install(DIRECTORY ${PROJECT_SOURCE_DIR}/docs/ DESTINATION share/doc/hpcprof COMPONENT hpcprof
    FILES_MATCHING PATTERN "*.md" PATTERN "*.png" PATTERN "*.json" PATTERN "validation" EXCLUDE)
install(FILES ${PROJECT_SOURCE_DIR}/README.md DESTINATION share/doc/hpcprof COMPONENT hpcprof)

set(CPACK_PACKAGE_NAME hpcprof)
set(CPACK_PACKAGE_VENDOR "hpcprof")
set(CPACK_PACKAGE_CONTACT "hpcprof maintainers <hpcprof@localhost>")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "performance profiling and bottleneck analysis for jobs on many ranks")
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_STRIP_FILES ON) # RelWithDebInfo binaries: 41 MB of debug info otherwise
set(CPACK_COMPONENTS_ALL hpcprof)
if(HPCPROF_HAVE_QT)
    list(APPEND CPACK_COMPONENTS_ALL gui)
endif()
set(CPACK_DEB_COMPONENT_INSTALL ON)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_SECTION devel)
set(CPACK_DEBIAN_HPCPROF_PACKAGE_NAME hpcprof)
set(CPACK_DEBIAN_HPCPROF_DESCRIPTION
    "hpcprof: profiler for MPI, I/O, GPU and thread activity of jobs on many ranks.\n`hpcprof run` records a program (LD_PRELOAD agent and PMPI wrappers), `hpcprof report`\nexplains where its time went. Command line only: no Qt.")
# The MPI module is not linked with libmpi (it finds MPI at run time), so MPI is only suggested.
set(CPACK_DEBIAN_HPCPROF_PACKAGE_SUGGESTS "openmpi-bin, hpcprof-gui")
set(CPACK_DEBIAN_GUI_PACKAGE_NAME hpcprof-gui)
set(CPACK_DEBIAN_GUI_DESCRIPTION "hpcprof-gui: Qt 6 desktop viewer for hpcprof traces.")
set(CPACK_DEBIAN_GUI_PACKAGE_DEPENDS "hpcprof (= ${PROJECT_VERSION})")
set(CPACK_DEBIAN_GUI_PACKAGE_SECTION devel)
# Depends from the libraries the binaries link (dpkg-shlibdeps), where dpkg-dev is installed.
find_program(HPCPROF_DPKG_SHLIBDEPS dpkg-shlibdeps)
if(HPCPROF_DPKG_SHLIBDEPS)
    set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
    # libhpcprof_mpi.so links libhpcprof.so, which is in the package itself.
    set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS_PRIVATE_DIRS ${PROJECT_BINARY_DIR}/lib)
endif()
include(CPack)
