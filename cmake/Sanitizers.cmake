# VOLLEY_SANITIZE="address;undefined" (or "thread") instruments every target, tests included.
if(VOLLEY_SANITIZE)
  list(JOIN VOLLEY_SANITIZE "," _volley_sanitizers)
  add_compile_options(-fsanitize=${_volley_sanitizers} -fno-omit-frame-pointer -fno-sanitize-recover=all)
  add_link_options(-fsanitize=${_volley_sanitizers})
  # GCC 12 warns (-Wtsan, an error with -Werror) that ThreadSanitizer does not model
  # std::atomic_thread_fence, which Asio's headers use; the warning is about the tool, not this
  # code. A race TSan misses or misreports through a fence would still show in the tests.
  if("thread" IN_LIST VOLLEY_SANITIZE AND CMAKE_CXX_COMPILER_ID STREQUAL "GNU")
    add_compile_options(-Wno-tsan)
  endif()
endif()
# VOLLEY_FUZZ: coverage instrumentation for libFuzzer in every target (the fuzz_<target> binaries
# add the libFuzzer runtime itself at link time: tests/fuzz/CMakeLists.txt).
if(VOLLEY_FUZZ)
  if(NOT CMAKE_CXX_COMPILER_ID MATCHES "Clang")
    message(FATAL_ERROR "VOLLEY_FUZZ needs clang (libFuzzer): scripts/fuzz.sh configures it")
  endif()
  add_compile_options(-fsanitize=fuzzer-no-link)
endif()
