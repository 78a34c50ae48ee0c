// volley: network workload generator. Everything lives in the library; main only hands over.
#include "volley/cli/app.hpp"

int main(int argc, char** argv) { return volley::cli::App{}.main(argc, argv); }
