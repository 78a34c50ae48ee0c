#pragma once
// SIGINT and SIGTERM for `volley run` and `volley sweep`: the first one asks the run to stop and
// report what it measured; a second one ends the process at once (exit 130, no report), for an
// operator who will not wait for the wind-down. The second must work whatever the control thread
// is doing (joining workers, say), so it is handled in the signal handler itself, not through the
// io_context.
//
// A `Scope` installs the handlers and restores the previous ones when it ends; scopes nest (the
// outermost installs). A `Watch` forwards the first signal to a callback on an io_context: at
// once if it came before the watch began (during the local slave's start-up, say).
#include <functional>
#include <memory>

#include <boost/asio/io_context.hpp>

namespace volley::cli {

class InterruptSignals {
 public:
  class Scope {
   public:
    Scope();
    ~Scope();
    Scope(const Scope&) = delete;
    Scope& operator=(const Scope&) = delete;
  };

  class Watch {
   public:
    /// Calls `on_interrupt` on `context` (once) when the first signal comes. Needs a live Scope.
    Watch(boost::asio::io_context& context, std::function<void()> on_interrupt);
    ~Watch();
    Watch(const Watch&) = delete;
    Watch& operator=(const Watch&) = delete;

   private:
    struct Reader;
    std::shared_ptr<Reader> reader_;
  };

  /// Whether a signal came while a scope was installed (since the outermost one began).
  [[nodiscard]] static bool received();
};

}  // namespace volley::cli
