#pragma once
// The command line: parses argv, wires the modules together, and alone picks the exit code.
namespace volley::cli {

class App {
 public:
  /// Runs volley with the process arguments; returns the process exit status (core::ExitCode).
  int main(int argc, char** argv);
};

}  // namespace volley::cli
