# cmake --install BUILD --prefix P: bin/dcsim, its man pages and shell
# completions (generated at build time from the binary's own help texts and
# option tables by cmake/gen-docs.sh), the docs and the example scenarios.
# dcsim needs none of them at run time: its schema, catalogs, default
# scenario and report scripts are compiled in (sim/app/CMakeLists.txt).
include(GNUInstallDirs)

set(DCSIM_GEN_DIR ${CMAKE_BINARY_DIR}/generated)
add_custom_command(
  OUTPUT ${DCSIM_GEN_DIR}/stamp
  # a sanitizer build's leak report must not fail the build: ctest checks leaks
  COMMAND ${CMAKE_COMMAND} -E env ASAN_OPTIONS=detect_leaks=0
          sh ${PROJECT_SOURCE_DIR}/cmake/gen-docs.sh $<TARGET_FILE:dcsim> ${DCSIM_GEN_DIR}
  COMMAND ${CMAKE_COMMAND} -E touch ${DCSIM_GEN_DIR}/stamp
  DEPENDS dcsim ${PROJECT_SOURCE_DIR}/cmake/gen-docs.sh
  COMMENT "Generating the man pages and shell completions from dcsim's help"
  VERBATIM)
add_custom_target(dcsim_docs ALL DEPENDS ${DCSIM_GEN_DIR}/stamp)

install(TARGETS dcsim RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
install(DIRECTORY ${DCSIM_GEN_DIR}/man1/ DESTINATION ${CMAKE_INSTALL_MANDIR}/man1
        FILES_MATCHING PATTERN "*.1")
install(FILES ${DCSIM_GEN_DIR}/bash/dcsim
        DESTINATION ${CMAKE_INSTALL_DATADIR}/bash-completion/completions)
install(FILES ${DCSIM_GEN_DIR}/zsh/_dcsim DESTINATION ${CMAKE_INSTALL_DATADIR}/zsh/site-functions)
install(FILES ${PROJECT_SOURCE_DIR}/README.md ${PROJECT_SOURCE_DIR}/LICENSE
        DESTINATION ${CMAKE_INSTALL_DOCDIR})
install(DIRECTORY ${PROJECT_SOURCE_DIR}/docs/ DESTINATION ${CMAKE_INSTALL_DOCDIR}/docs)
install(DIRECTORY ${PROJECT_SOURCE_DIR}/scenarios/examples/
        DESTINATION ${CMAKE_INSTALL_DATADIR}/dcsim/examples FILES_MATCHING PATTERN "*.xml")
