#include "volley/cli/app.hpp"

#include <cstdio>

namespace volley::cli {

int App::main(int /*argc*/, char** /*argv*/) {
  std::puts("volley " VOLLEY_VERSION);
  return 0;
}

}  // namespace volley::cli
