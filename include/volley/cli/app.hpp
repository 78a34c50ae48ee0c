#pragma once
// The command line: parses argv, wires the modules together, and alone picks the exit code.
namespace volley::cli {

class App {
 public:
  /// Runs volley with the process arguments; returns the process exit status (core::ExitCode).
  /// Errors are values all the way here; an exception that still comes out of a command is a
  /// bug, reported in one line (exit status 1) instead of an abort.
  int main(int argc, char** argv);

 private:
  int dispatch(int argc, char** argv);
};

}  // namespace volley::cli
