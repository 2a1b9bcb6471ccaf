# Where every installed file goes (FHS / Debian 12 with CMAKE_INSTALL_PREFIX=/usr) and which package
# (CPack component) it belongs to. Included last by the top CMakeLists.txt, so every rule keys on a
# target name and skips targets this tree does not define (if(TARGET ...)): the module folders keep
# building targets, this file alone decides the installed layout. Packages: cmake/HeftPackage.cmake.
#
#   component  package     contents
#   service    heft        heftd, the estimator plugin, heftctl, the unit and target, sysusers,
#                          /etc/heft/heft.yaml (conffile), the robot files
#   tools      heft-tools  heft-sim, heft-scenario, heft-identify, heft-report, heft-handoff-reader,
#                          the simulated configurations
#   dev        heft-dev    hal, plugin interface, dynamics and estimator headers; the static
#                          libraries of dynamics and estimator; CMake package heft (heft::hal,
#                          heft::dynamics, heft::estimator), heft-hal.pc, the examples
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

# Absolute installed paths (the unit, the configurations and heftd name them).
set(HEFT_INSTALL_PLUGIN_DIR ${CMAKE_INSTALL_LIBDIR}/heft)  # /usr/lib/<multiarch>/heft
set(HEFT_PLUGIN_INSTALL_PATH ${CMAKE_INSTALL_PREFIX}/${HEFT_INSTALL_PLUGIN_DIR}/heft_estimator_plugin.so)
set(HEFT_INSTALL_ROBOTS_DIR ${CMAKE_INSTALL_FULL_DATADIR}/heft/robots)
set(HEFT_INSTALL_SIM_DIR ${CMAKE_INSTALL_FULL_DATADIR}/heft/sim)
set(HEFT_INSTALL_CONFIG_DIR ${CMAKE_INSTALL_FULL_SYSCONFDIR}/heft)  # /etc/heft for prefix /usr
# Debian 12 keeps units in /lib/systemd/system (the /usr-merge moratorium; lintian and
# pkg-config --variable=systemdsystemunitdir systemd agree). Elsewhere: under the prefix.
if(CMAKE_INSTALL_PREFIX STREQUAL "/usr")
  set(_unitdir /lib/systemd/system)
  set(_udevdir /lib/udev/rules.d)
else()
  set(_unitdir ${CMAKE_INSTALL_PREFIX}/lib/systemd/system)
  set(_udevdir ${CMAKE_INSTALL_PREFIX}/lib/udev/rules.d)
endif()
set(HEFT_SYSTEMD_UNIT_DIR ${_unitdir} CACHE PATH "Where the systemd units are installed")
set(HEFT_SYSUSERS_DIR ${CMAKE_INSTALL_PREFIX}/lib/sysusers.d)
set(HEFT_TMPFILES_DIR ${CMAKE_INSTALL_PREFIX}/lib/tmpfiles.d)

# heftd (or, after the host split, the library that looks the plugin up) defaults host.plugin to the
# installed plugin (a build tree's heftd still prefers the plugin next to it).
foreach(t heftd heft_host heft-sim)
  if(TARGET ${t})
    target_compile_definitions(${t} PRIVATE HEFT_PLUGIN_INSTALL_PATH="${HEFT_PLUGIN_INSTALL_PATH}")
  endif()
endforeach()

# --- programs and the plugin ---------------------------------------------------------------------
# Installed binaries resolve every symbol at load (full RELRO with -z now, Debian's hardening): a
# relink only. (_FORTIFY_SOURCE would recompile everything they link; not set: docs/service.md,
# "The packages: what is checked".)
foreach(t heftd heftctl heft_estimator_plugin heft-sim heft-scenario heft-identify heft-report
          heft-handoff-reader)
  if(TARGET ${t})
    target_link_options(${t} PRIVATE LINKER:-z,relro,-z,now)
  endif()
endforeach()
foreach(t heftd heftctl)
  if(TARGET ${t})
    install(TARGETS ${t} RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR} COMPONENT service)
  endif()
endforeach()
if(TARGET heft_estimator_plugin)
  install(TARGETS heft_estimator_plugin LIBRARY DESTINATION ${HEFT_INSTALL_PLUGIN_DIR} COMPONENT service)
endif()
foreach(t heft-sim heft-scenario heft-identify heft-report heft-handoff-reader)
  if(TARGET ${t})
    install(TARGETS ${t} RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR} COMPONENT tools)
  endif()
endforeach()

# --- the unit, its target, the service user -------------------------------------------------------
if(TARGET heftd AND EXISTS ${CMAKE_BINARY_DIR}/systemd/heftd.service)  # no unit without its ExecStart
  install(FILES ${CMAKE_BINARY_DIR}/systemd/heftd.service ${CMAKE_SOURCE_DIR}/systemd/robot-walking.target
          DESTINATION ${HEFT_SYSTEMD_UNIT_DIR} COMPONENT service)
  install(FILES ${CMAKE_SOURCE_DIR}/systemd/heft.sysusers DESTINATION ${HEFT_SYSUSERS_DIR} RENAME heft.conf
          COMPONENT service)
  # /var/log/heft owned by heft, for heftd run by hand (postinst applies it at once).
  install(FILES ${CMAKE_SOURCE_DIR}/systemd/heft.tmpfiles DESTINATION ${HEFT_TMPFILES_DIR} RENAME heft.conf
          COMPONENT service)
  # Group heft's rw on /dev/cpu_dma_latency (host.realtime.cpu_dma_latency_us).
  install(FILES ${CMAKE_SOURCE_DIR}/systemd/60-heft.rules DESTINATION ${_udevdir}
          COMPONENT service)
endif()

# --- configuration and robot files ----------------------------------------------------------------
# The installed configurations name the installed robot files by absolute path; the source tree's keep
# their relative paths. heft_installed_config(SRC OUT) rewrites every relative `urdf:`/`parameters:` of
# SRC that points into config/robots to HEFT_INSTALL_ROBOTS_DIR and refuses any other relative path
# (it would name a file the package does not install).
function(heft_installed_config src out)
  get_filename_component(src_dir ${src} DIRECTORY)
  file(STRINGS ${src} lines)
  set_property(DIRECTORY ${CMAKE_SOURCE_DIR} APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS ${src})
  set(text "")
  foreach(line IN LISTS lines)
    if(line MATCHES "^([ -]*(urdf|parameters): *)([^ #\\[{]+)(.*)$")
      set(head "${CMAKE_MATCH_1}")
      set(value "${CMAKE_MATCH_3}")
      set(tail "${CMAKE_MATCH_4}")
      if(NOT IS_ABSOLUTE "${value}")
        get_filename_component(abs "${src_dir}/${value}" ABSOLUTE)
        file(RELATIVE_PATH rel ${CMAKE_SOURCE_DIR}/config/robots "${abs}")
        if(rel MATCHES "^\\.\\.")
          message(FATAL_ERROR "${src}: '${value}' is not under config/robots, so the package does not "
                              "install it; installed configurations may name only config/robots files")
        endif()
        set(line "${head}${HEFT_INSTALL_ROBOTS_DIR}/${rel}${tail}")
      endif()
    endif()
    string(APPEND text "${line}\n")
  endforeach()
  file(CONFIGURE OUTPUT ${out} CONTENT "${text}" @ONLY)
endfunction()

set(_pkgdir ${CMAKE_BINARY_DIR}/installed)
if(EXISTS ${CMAKE_SOURCE_DIR}/config/heft.yaml)
  heft_installed_config(${CMAKE_SOURCE_DIR}/config/heft.yaml ${_pkgdir}/etc/heft.yaml)
  install(FILES ${_pkgdir}/etc/heft.yaml DESTINATION ${HEFT_INSTALL_CONFIG_DIR} COMPONENT service)
endif()
# Published robots' models (config/robots/unitree_g1: its own licence beside it) stay in the source
# tree: the simulator's work on them is a developer's.
install(DIRECTORY ${CMAKE_SOURCE_DIR}/config/robots/ DESTINATION ${HEFT_INSTALL_ROBOTS_DIR}
        COMPONENT service FILES_MATCHING PATTERN "*.urdf" PATTERN "*.yaml" PATTERN "unitree_g1" EXCLUDE)
file(GLOB _sim_configs CONFIGURE_DEPENDS ${CMAKE_SOURCE_DIR}/config/sim/*.yaml)
foreach(cfg IN LISTS _sim_configs)
  get_filename_component(name ${cfg} NAME)
  heft_installed_config(${cfg} ${_pkgdir}/sim/${name})
  install(FILES ${_pkgdir}/sim/${name} DESTINATION ${HEFT_INSTALL_SIM_DIR} COMPONENT tools)
endforeach()

# --- development files: headers, libraries, CMake package, pkg-config, examples -------------------
# heft-dev holds static libraries (heft::dynamics, heft::estimator), so it is architecture-dependent
# and its CMake package lives in the multiarch library directory; heft-hal.pc (headers only) stays
# in /usr/share.
set(HEFT_INSTALL_CMAKE_DIR ${CMAKE_INSTALL_LIBDIR}/cmake/heft)
install(DIRECTORY ${CMAKE_SOURCE_DIR}/hal/include/heft/hal DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/heft
        COMPONENT dev FILES_MATCHING PATTERN "*.h" PATTERN "*.hpp")
# The plugin interface only (plugin/include/heft/plugin/plugin_config.hpp is heftd's private
# configuration; the interface only forward-declares PluginConfig, which a framework leaves null).
install(FILES ${CMAKE_SOURCE_DIR}/plugin/include/heft/plugin/controller_interface.hpp
        DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/heft/plugin COMPONENT dev)
# The estimator as a library: its headers and the dynamics core's (which they include).
foreach(lib dynamics estimator)
  install(DIRECTORY ${CMAKE_SOURCE_DIR}/${lib}/include/heft/${lib} DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/heft
          COMPONENT dev FILES_MATCHING PATTERN "*.hpp")
endforeach()
if(TARGET heft_hal AND TARGET heft_dynamics AND TARGET heft_estimator)
  install(TARGETS heft_hal heft_dynamics heft_estimator EXPORT heftTargets
          ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR} COMPONENT dev
          INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
  install(EXPORT heftTargets NAMESPACE heft:: DESTINATION ${HEFT_INSTALL_CMAKE_DIR} COMPONENT dev)
  # heftConfig.cmake names the installed plugin (heft_PLUGIN) for a framework that loads it.
  set(HEFT_INSTALL_PLUGIN_FILE ${HEFT_INSTALL_PLUGIN_DIR}/heft_estimator_plugin.so)
  configure_package_config_file(${CMAKE_SOURCE_DIR}/packaging/heftConfig.cmake.in
                                ${_pkgdir}/heftConfig.cmake INSTALL_DESTINATION ${HEFT_INSTALL_CMAKE_DIR}
                                PATH_VARS HEFT_INSTALL_PLUGIN_FILE)
  write_basic_package_version_file(${_pkgdir}/heftConfigVersion.cmake COMPATIBILITY SameMinorVersion)
  install(FILES ${_pkgdir}/heftConfig.cmake ${_pkgdir}/heftConfigVersion.cmake
          DESTINATION ${HEFT_INSTALL_CMAKE_DIR} COMPONENT dev)
endif()
configure_file(${CMAKE_SOURCE_DIR}/packaging/heft-hal.pc.in ${_pkgdir}/heft-hal.pc @ONLY)
install(FILES ${_pkgdir}/heft-hal.pc DESTINATION ${CMAKE_INSTALL_DATADIR}/pkgconfig COMPONENT dev)
# The examples' sources and the CMake project that builds them from the installed files
# (tools/examples/README.md).
install(FILES ${CMAKE_SOURCE_DIR}/tools/examples/framework_example.c
              ${CMAKE_SOURCE_DIR}/tools/examples/estimator_example.cpp
              ${CMAKE_SOURCE_DIR}/tools/examples/plugin_host_example.cpp
              ${CMAKE_SOURCE_DIR}/tools/examples/CMakeLists.txt
        DESTINATION ${CMAKE_INSTALL_DATADIR}/doc/heft-dev/examples COMPONENT dev)

# Per-package copyright, changelog (Debian policy 12.5, 12.7) and the lintian tags accepted, with why.
foreach(pair service:heft tools:heft-tools dev:heft-dev)
  string(REPLACE ":" ";" pair ${pair})
  list(GET pair 0 comp)
  list(GET pair 1 pkg)
  install(FILES ${CMAKE_SOURCE_DIR}/packaging/copyright DESTINATION ${CMAKE_INSTALL_DATADIR}/doc/${pkg}
          COMPONENT ${comp})
  install(FILES ${CMAKE_BINARY_DIR}/installed/changelog.Debian.gz
          DESTINATION ${CMAKE_INSTALL_DATADIR}/doc/${pkg} COMPONENT ${comp})
  install(FILES ${CMAKE_SOURCE_DIR}/packaging/lintian/${pkg} DESTINATION ${CMAKE_INSTALL_DATADIR}/lintian/overrides
          COMPONENT ${comp})
endforeach()

# What `tools/heft package` builds before cpack (cpack itself does not build: see HeftPackage.cmake).
add_custom_target(heft_packaged_targets)
foreach(t heftd heftctl heft_estimator_plugin heft-sim heft-scenario heft-identify heft-report
          heft-handoff-reader heft_dynamics heft_estimator)
  if(TARGET ${t})
    add_dependencies(heft_packaged_targets ${t})
  endif()
endforeach()
