# abh_write_if_changed(FILE TEXT): writes TEXT to FILE only when it differs from what FILE holds,
# so that a generated source that did not change does not make anything rebuild.
function(abh_write_if_changed file text)
  if(EXISTS "${file}")
    file(READ "${file}" old)
    if(old STREQUAL text)
      return()
    endif()
  endif()
  file(WRITE "${file}" "${text}")
endfunction()
