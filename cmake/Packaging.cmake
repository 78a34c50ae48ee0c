# Where `cmake --install` puts volley (FHS places via GNUInstallDirs), and the Debian package
# CPack builds from the same rules: `cpack -G DEB` in the build folder, or
# scripts/package-check.sh, which also unpacks and tries the result.
include(GNUInstallDirs)

install(TARGETS volley RUNTIME DESTINATION "${CMAKE_INSTALL_BINDIR}")
install(FILES "${PROJECT_SOURCE_DIR}/docs/volley.1" DESTINATION "${CMAKE_INSTALL_MANDIR}/man1")
install(FILES "${PROJECT_SOURCE_DIR}/scripts/completion/volley.bash"
        DESTINATION "${CMAKE_INSTALL_DATADIR}/bash-completion/completions" RENAME volley)
install(DIRECTORY "${PROJECT_SOURCE_DIR}/profiles/"
        DESTINATION "${CMAKE_INSTALL_DATADIR}/volley/profiles"
        FILES_MATCHING PATTERN "*.xml" PATTERN "README.md")
install(FILES "${PROJECT_SOURCE_DIR}/README.md" DESTINATION "${CMAKE_INSTALL_DOCDIR}")
install(DIRECTORY "${PROJECT_SOURCE_DIR}/docs/" DESTINATION "${CMAKE_INSTALL_DOCDIR}"
        FILES_MATCHING PATTERN "*.md")

set(VOLLEY_MAINTAINER "volley developers <volley@example.org>"
    CACHE STRING "Maintainer field of the Debian package")
set(CPACK_GENERATOR "DEB")
set(CPACK_PACKAGE_NAME "volley")
set(CPACK_PACKAGE_VERSION "${PROJECT_VERSION}")
set(CPACK_PACKAGE_CONTACT "${VOLLEY_MAINTAINER}")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "network workload generator (uperf profiles)")
set(CPACK_PACKAGE_DESCRIPTION
    "volley runs uperf-style XML profiles (groups of strands running
transactions of flowops) against a slave that mirrors them, and reports
transactions and operations per second, throughput, latency percentiles,
and CPU and NIC usage on both ends. Several masters can start together
(--start-at) and their results can be merged into one (volley merge).")
set(CPACK_PACKAGING_INSTALL_PREFIX "/usr")
set(CPACK_STRIP_FILES ON)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)  # volley_<version>_<arch>.deb
set(CPACK_DEBIAN_PACKAGE_MAINTAINER "${VOLLEY_MAINTAINER}")
set(CPACK_DEBIAN_PACKAGE_SECTION "net")
set(CPACK_DEBIAN_PACKAGE_PRIORITY "optional")
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)  # Depends: from dpkg-shlibdeps on the binary
set(CPACK_DEBIAN_PACKAGE_SUGGESTS "bash-completion")
include(CPack)
