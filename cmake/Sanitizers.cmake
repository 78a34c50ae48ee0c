# VOLLEY_SANITIZE="address;undefined" (or "thread") instruments every target, tests included.
if(VOLLEY_SANITIZE)
  list(JOIN VOLLEY_SANITIZE "," _volley_sanitizers)
  add_compile_options(-fsanitize=${_volley_sanitizers} -fno-omit-frame-pointer -fno-sanitize-recover=all)
  add_link_options(-fsanitize=${_volley_sanitizers})
endif()
