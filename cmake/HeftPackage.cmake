# Debian packages with CPack's DEB generator, one package per install component
# (cmake/HeftInstall.cmake): heft, heft-tools, heft-dev. Build them with `bash tools/heft package`
# (Release, CMAKE_INSTALL_PREFIX=/usr); why CPack and not debian/ + dpkg-buildpackage:
# docs/service.md, "The packages: why CPack, not debian/". Checked by tests/package (layout,
# systemd-analyze, lintian, consumers).
if(NOT CMAKE_INSTALL_PREFIX STREQUAL "/usr")
  message(STATUS "heft packages: CMAKE_INSTALL_PREFIX is ${CMAKE_INSTALL_PREFIX}; Debian packages need /usr "
                 "(the unit and configurations name installed paths): tools/heft package sets it")
endif()
set(HEFT_DEB_RELEASE 1 CACHE STRING "Debian revision of the packages (the -N of 0.1.0-N)")
set(HEFT_DEB_VERSION ${PROJECT_VERSION}-${HEFT_DEB_RELEASE})
set(HEFT_MAINTAINER "heft maintainers <maintainers@users.noreply.a-seed-088c8392.example>")

# changelog.Debian.gz for every package (gzip -n: no name or time stamp, reproducible).
configure_file(${CMAKE_SOURCE_DIR}/packaging/changelog.in ${CMAKE_BINARY_DIR}/installed/changelog.Debian @ONLY)
execute_process(COMMAND gzip -9nf ${CMAKE_BINARY_DIR}/installed/changelog.Debian RESULT_VARIABLE _gz)
if(NOT _gz EQUAL 0)
  message(FATAL_ERROR "gzip of ${CMAKE_BINARY_DIR}/installed/changelog.Debian failed")
endif()

# cpack packages what is built; it does not build the world first (tools/heft package builds
# heft_packaged_targets). Note: `make install` then also needs a build first.
set(CMAKE_SKIP_INSTALL_ALL_DEPENDENCY ON)

# Packages are for any amd64 machine: a tree built for this CPU (HEFT_NATIVE_CPU) says so.
if(HEFT_NATIVE_CPU)
  message(WARNING "HEFT_NATIVE_CPU is ON: packages built from this tree run only on CPUs with this "
                  "machine's instruction set; build the packages with it OFF (the default)")
endif()
set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGE_NAME heft)
set(CPACK_PACKAGE_VENDOR "heft maintainers")
set(CPACK_PACKAGE_CONTACT "${HEFT_MAINTAINER}")
# Each component's description below is whole (first line the synopsis). CPackDeb prepends the
# project's summary to it unless the summary is CPack's default, so it is set to that default.
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "${CMAKE_PROJECT_NAME} built using CMake")
set(CPACK_PACKAGING_INSTALL_PREFIX ${CMAKE_INSTALL_PREFIX})
set(CPACK_STRIP_FILES ON)
set(CPACK_DEB_COMPONENT_INSTALL ON)
set(CPACK_COMPONENTS_ALL service tools dev)  # never the Unspecified component
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)      # heft_0.1.0-1_amd64.deb
set(CPACK_DEBIAN_PACKAGE_RELEASE ${HEFT_DEB_RELEASE})
set(CPACK_DEBIAN_PACKAGE_MAINTAINER "${HEFT_MAINTAINER}")
set(CPACK_DEBIAN_PACKAGE_HOMEPAGE "https://example.invalid/heft")
set(CPACK_DEBIAN_PACKAGE_PRIORITY optional)
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)  # dpkg-shlibdeps: libc6, libstdc++6, libyaml-cpp0.7, ...
set(CPACK_DEBIAN_ENABLE_COMPONENT_DEPENDS ON)
set(CPACK_DEBIAN_PACKAGE_CONTROL_STRICT_PERMISSION ON)

# heft: the robot's service.
set(CPACK_DEBIAN_SERVICE_PACKAGE_NAME heft)
set(CPACK_DEBIAN_SERVICE_PACKAGE_SECTION science)
set(CPACK_DEBIAN_SERVICE_PACKAGE_DEPENDS "adduser")  # postinst's fallback when sysusers is missing
set(CPACK_COMPONENT_SERVICE_DESCRIPTION
    "online inertial parameter estimation for humanoid robots (service)
heft estimates, online and on the robot, the inertial parameters (mass,
first moment, inertia tensor) of chosen links of a humanoid robot and hands
them to the whole-body controller, always physically consistent
(log-Cholesky extended Kalman filter).
.
This package contains heftd, the service that reads the robot's CAN buses
and runs the estimator plugin at 333 Hz, the plugin, heftctl, the systemd
unit (installed, not enabled), the service user and the reference robot.")
set(_heft_scripts postinst prerm postrm conffiles)
list(TRANSFORM _heft_scripts PREPEND ${CMAKE_SOURCE_DIR}/packaging/debian/heft/)
set(CPACK_DEBIAN_SERVICE_PACKAGE_CONTROL_EXTRA "${_heft_scripts}")

# heft-tools: the simulated robot and the offline tools.
set(CPACK_DEBIAN_TOOLS_PACKAGE_NAME heft-tools)
set(CPACK_DEBIAN_TOOLS_PACKAGE_SECTION science)
set(CPACK_COMPONENT_TOOLS_DEPENDS service)  # the plugin and the robot files
set(CPACK_COMPONENT_TOOLS_DESCRIPTION
    "online inertial parameter estimation for humanoid robots (tools)
heft estimates, online and on the robot, the inertial parameters of chosen
links of a humanoid robot and hands them to the whole-body controller.
.
This package contains the simulated robot (MuJoCo) and its scenarios and
configurations, batch identification of the nominal model from recordings
(heft-identify), the report of simulated runs (heft-report) and an example
reader of the shared-memory hand-off (heft-handoff-reader).")

# heft-dev: headers, the static libraries of dynamics and estimator, CMake package heft,
# pkg-config heft-hal. Its Depends are what the exported package finds (heftConfig.cmake.in).
set(CPACK_DEBIAN_DEV_PACKAGE_NAME heft-dev)
set(CPACK_DEBIAN_DEV_PACKAGE_SECTION libdevel)
set(CPACK_DEBIAN_DEV_PACKAGE_SHLIBDEPS OFF)
set(CPACK_DEBIAN_DEV_PACKAGE_DEPENDS "libeigen3-dev (>= 3.4), liburdfdom-dev")
set(CPACK_DEBIAN_DEV_PACKAGE_RECOMMENDS "heft")  # the plugin the C++ framework example loads
set(CPACK_COMPONENT_DEV_DESCRIPTION
    "online inertial parameter estimation for humanoid robots (development)
heft estimates, online and on the robot, the inertial parameters of chosen
links of a humanoid robot and hands them to the whole-body controller.
.
This package contains what a robot's controller framework builds against:
the C and C++ headers of the shared-memory hand-off and framework input
segments, the plugin interface, the estimator and its rigid-body core as
static libraries with their headers, the CMake package heft (targets
heft::hal, heft::dynamics, heft::estimator), the pkg-config file heft-hal
and examples: the framework's side in C, a framework hosting the plugin in
its own loop, and the estimator driven directly.")

include(CPack)
