# dcsim_embed(TARGET_SOURCE_VAR OUTPUT_C SYMBOL FILE [SYMBOL FILE ...])
# Generates OUTPUT_C at build time holding each FILE as
#   const unsigned char SYMBOL[]; const size_t SYMBOL_len;
# (NUL-terminated, the terminator not counted), so the dcsim binary carries
# its schema, catalogs and default scenario and runs from any directory.
function(dcsim_embed out_c)
  set(pairs ${ARGN})
  set(deps)
  set(args)
  list(LENGTH pairs n)
  math(EXPR last "${n} - 1")
  foreach(i RANGE 0 ${last} 2)
    math(EXPR j "${i} + 1")
    list(GET pairs ${i} sym)
    list(GET pairs ${j} file)
    list(APPEND deps ${file})
    list(APPEND args "${sym}=${file}")
  endforeach()
  string(REPLACE ";" "|" joined "${args}")
  add_custom_command(
    OUTPUT ${out_c}
    COMMAND ${CMAKE_COMMAND} -DOUT=${out_c} "-DPAIRS=${joined}" -P ${PROJECT_SOURCE_DIR}/cmake/EmbedFiles.cmake
    DEPENDS ${deps} ${PROJECT_SOURCE_DIR}/cmake/EmbedFiles.cmake
    COMMENT "Embedding ${n} files into ${out_c}"
    VERBATIM)
endfunction()
