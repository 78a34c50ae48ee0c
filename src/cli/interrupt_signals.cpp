#include "volley/cli/interrupt_signals.hpp"

#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <atomic>

#include <boost/asio/posix/stream_descriptor.hpp>
#include <boost/asio/post.hpp>

#include "volley/core/exit_code.hpp"

namespace volley::cli {

namespace asio = boost::asio;

namespace {

// Shared with the signal handler: lock-free atomics and a pipe only.
std::atomic<int> g_signals{0};
std::atomic<int> g_notify_fd{-1};  ///< the pipe's write end: one byte on the first signal
int g_read_fd = -1;
int g_depth = 0;  ///< nested scopes (control thread only)
struct sigaction g_previous_int {};
struct sigaction g_previous_term {};

constexpr char kAtOnce[] = "\nvolley: interrupted again: exiting at once, without the report\n";

void on_signal(int) {
  if (g_signals.fetch_add(1) > 0) {
    [[maybe_unused]] const auto n = ::write(STDERR_FILENO, kAtOnce, sizeof kAtOnce - 1);
    ::_exit(core::to_int(core::ExitCode::kInterrupted));
  }
  const int fd = g_notify_fd.load();
  if (fd >= 0) {
    const char byte = 1;
    [[maybe_unused]] const auto n = ::write(fd, &byte, 1);
  }
}

}  // namespace

InterruptSignals::Scope::Scope() {
  if (g_depth++ > 0) return;
  g_signals = 0;
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC | O_NONBLOCK) == 0) {
    g_read_fd = fds[0];
    g_notify_fd = fds[1];
  }
  struct sigaction action {};
  action.sa_handler = on_signal;
  ::sigemptyset(&action.sa_mask);
  action.sa_flags = SA_RESTART;
  ::sigaction(SIGINT, &action, &g_previous_int);
  ::sigaction(SIGTERM, &action, &g_previous_term);
}

InterruptSignals::Scope::~Scope() {
  if (--g_depth > 0) return;
  ::sigaction(SIGINT, &g_previous_int, nullptr);
  ::sigaction(SIGTERM, &g_previous_term, nullptr);
  const int fd = g_notify_fd.exchange(-1);
  if (fd >= 0) ::close(fd);
  if (g_read_fd >= 0) ::close(g_read_fd);
  g_read_fd = -1;
}

bool InterruptSignals::received() { return g_signals.load() > 0; }

/// Reads the pipe on the io_context; outlives the Watch while a read is pending.
struct InterruptSignals::Watch::Reader {
  explicit Reader(asio::io_context& context) : pipe(context) {}
  asio::posix::stream_descriptor pipe;
  std::function<void()> on_interrupt;
  char byte = 0;
  bool called = false;
  void call() {
    if (called) return;
    called = true;
    on_interrupt();
  }
};

InterruptSignals::Watch::Watch(asio::io_context& context, std::function<void()> on_interrupt)
    : reader_(std::make_shared<Reader>(context)) {
  reader_->on_interrupt = std::move(on_interrupt);
  if (received()) {
    asio::post(context, [reader = reader_] { reader->call(); });
    return;
  }
  if (g_read_fd < 0) return;
  // Close-on-exec like the pipe itself: the child processes the run starts must not hold it.
  const int fd = ::fcntl(g_read_fd, F_DUPFD_CLOEXEC, 0);
  if (fd < 0) return;
  reader_->pipe.assign(fd);
  reader_->pipe.async_read_some(
      asio::buffer(&reader_->byte, 1),
      [reader = reader_](const boost::system::error_code& ec, std::size_t) {
        if (!ec) reader->call();
      });
}

InterruptSignals::Watch::~Watch() {
  boost::system::error_code ignored;
  reader_->pipe.cancel(ignored);
  reader_->called = true;  // a completion already queued does nothing now
}

}  // namespace volley::cli
