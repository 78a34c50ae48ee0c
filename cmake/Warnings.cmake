# volley_warnings: an interface target every volley target links, so warning policy lives here only.
add_library(volley_warnings INTERFACE)
target_compile_options(volley_warnings INTERFACE
  -Wall -Wextra -Wpedantic -Wshadow -Wconversion -Wsign-conversion -Wnon-virtual-dtor
  -Woverloaded-virtual -Wformat=2 -Wimplicit-fallthrough
  # GCC 12 misreads Asio's awaitable frame allocator (operator new/delete pair) as mismatched.
  -Wno-mismatched-new-delete)
if(VOLLEY_WERROR)
  target_compile_options(volley_warnings INTERFACE -Werror)
endif()
