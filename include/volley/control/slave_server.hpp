#pragma once
// The slave: accepts masters on its control port and serves each one in its own session (several
// at once are fine: each session has its own engine and threads). A session goes
// Idle -> Loaded -> Running -> Idle, and whatever ends it (finished, master gone, bad message)
// leaves nothing behind: its engine is stopped and joined and its listeners are closed.
// Thread: the io_context given at construction.
#include <cstdint>
#include <chrono>
#include <functional>
#include <map>
#include <string>

#include <boost/asio/awaitable.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>

namespace volley::control {

struct SlaveSettings {
  std::size_t default_workers = 1;
  /// A master silent for this long (no message, no ping) is considered gone.
  std::chrono::milliseconds silence_timeout{10000};
  /// One line per event worth telling an operator (session start/end, errors).
  std::function<void(const std::string&)> log;
};

class SlaveServer {
 public:
  SlaveServer(boost::asio::io_context& context, SlaveSettings settings);
  SlaveServer(const SlaveServer&) = delete;
  SlaveServer& operator=(const SlaveServer&) = delete;

  /// Binds the control port. Returns an error sentence, or "".
  std::string listen(const boost::asio::ip::tcp::endpoint& endpoint);
  [[nodiscard]] std::uint16_t port() const;
  /// Starts accepting masters.
  void start();
  /// Stops accepting and aborts every session; the context then runs out of work.
  void stop();
  [[nodiscard]] std::size_t active_sessions() const { return sessions_; }

 private:
  boost::asio::awaitable<void> accept_loop();
  boost::asio::awaitable<void> serve(boost::asio::ip::tcp::socket socket);

  boost::asio::io_context& context_;
  SlaveSettings settings_;
  boost::asio::ip::tcp::acceptor acceptor_;
  std::size_t sessions_ = 0;
  std::uint64_t next_session_ = 0;
  bool stopping_ = false;
  /// Live sessions: how to abort each (stop() calls them all).
  std::map<std::uint64_t, std::function<void()>> abort_hooks_;
};

}  // namespace volley::control
