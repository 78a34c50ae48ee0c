#include "volley/control/child_set.hpp"

#include <unistd.h>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <fmt/format.h>

#include "volley/control/step_bytes_wire.hpp"
#include "volley/results/result_json.hpp"

namespace volley::control {

namespace asio = boost::asio;
using nlohmann::json;

namespace {

constexpr auto kAwait = asio::as_tuple(asio::use_awaitable);
/// How long a child has to greet and load (parsing, compiling, binding a listener).
constexpr auto kLoadTimeout = std::chrono::seconds(60);
/// How long a child has to exit by itself once its link is closed, before it is killed.
constexpr auto kExitGrace = std::chrono::milliseconds(3000);

/// The next message from `channel` within `timeout` (the channel is closed if it does not come).
asio::awaitable<std::variant<json, ChannelError>> receive_within(asio::io_context& context,
                                                                 Channel& channel,
                                                                 std::chrono::seconds timeout) {
  asio::steady_timer guard(context);
  guard.expires_after(timeout);
  bool expired = false;
  guard.async_wait([&](const boost::system::error_code& ec) {
    if (ec) return;
    expired = true;
    channel.close();
  });
  auto got = co_await channel.receive();
  guard.cancel();
  co_await asio::post(context, asio::use_awaitable);  // the cancelled guard runs first
  if (expired) co_return ChannelError{fmt::format("no answer within {} s", timeout.count())};
  co_return got;
}

}  // namespace

results::ProcessRecord process_record(std::string name, const results::RunResult& result,
                                      std::int64_t rss_before, std::int64_t rss_after,
                                      const std::optional<sampling::CpuUsage>& cpu) {
  results::ProcessRecord record;
  record.name = std::move(name);
  record.pid = ::getpid();
  for (const auto& g : result.groups) record.strands += g.strands;
  record.connections = result.connections_established;
  // No timed step ended (a failed run): the growth is unknown, not negative.
  record.rss_growth_bytes = rss_after > 0 ? rss_after - rss_before : 0;
  if (cpu && cpu->process) {
    record.cpu_user_s = cpu->process->user_s;
    record.cpu_sys_s = cpu->process->sys_s;
  }
  return record;
}

std::variant<std::unique_ptr<ChildSet>, std::string> ChildSet::spawn(asio::io_context& context,
                                                                     ChildSetSettings settings) {
  std::unique_ptr<ChildSet> set(new ChildSet(context, settings));
  const char* role = settings.master_side ? "master" : "slave";
  for (std::uint32_t shard = settings.first_shard; shard < settings.shard_count; ++shard) {
    auto started = process::ChildProcess::spawn(
        settings.executable,
        {"--quiet", "--workers", std::to_string(std::max<std::size_t>(1, settings.workers))},
        fmt::format("{} process {} of {}", role, shard + 1, settings.shard_count));
    if (auto* problem = std::get_if<std::string>(&started)) return std::move(*problem);
    auto& child = std::get<process::ChildProcess>(started);
    asio::ip::tcp::socket socket(context);
    boost::system::error_code ec;
    // A Unix socketpair behind a TCP socket object: Channel only reads and writes bytes.
    socket.assign(asio::ip::tcp::v4(), child.take_fd(), ec);
    if (ec) return fmt::format("{}: {}", child.describe(), ec.message());
    set->children_.push_back(Child{.process = std::move(child),
                                   .channel = std::make_unique<Channel>(std::move(socket))});
  }
  return set;
}

ChildSet::~ChildSet() {
  *alive_ = false;
  for (auto& c : children_) {
    if (c.channel) c.channel->close();
    c.process.reap(std::chrono::milliseconds(0));
  }
}

asio::awaitable<std::string> ChildSet::load(LoadRequest load) {
  for (std::size_t i = 0; i < children_.size(); ++i) {
    Channel& channel = *children_[i].channel;
    json hello = make_hello();
    auto sent = co_await channel.send(std::move(hello));
    if (auto* e = std::get_if<ChannelError>(&sent)) co_return lost(i, *e);
    auto got = co_await receive_within(context_, channel, kLoadTimeout);
    if (auto* e = std::get_if<ChannelError>(&got)) co_return lost(i, *e);
    if (auto problem = check_hello(std::get<json>(got), describe(i)); !problem.empty())
      co_return problem;
    children_[i].phase = peer_after_receive(children_[i].phase, MessageType::kHello);
    LoadRequest mine = load;
    mine.shard_index = settings_.first_shard + static_cast<std::uint32_t>(i);
    mine.shard_count = settings_.shard_count;
    mine.master_side = settings_.master_side;
    mine.workers = std::max<std::size_t>(1, settings_.workers);
    auto sent_load = co_await channel.send(to_json(mine));
    if (auto* e = std::get_if<ChannelError>(&sent_load)) co_return lost(i, *e);
    children_[i].phase = peer_after_send(children_[i].phase, MessageType::kLoad);
  }
  // The children load at the same time; their answers are read in order.
  ports_.clear();
  negotiated_.clear();
  for (std::size_t i = 0; i < children_.size(); ++i) {
    for (;;) {
      auto got = co_await receive_within(context_, *children_[i].channel, kLoadTimeout);
      if (auto* e = std::get_if<ChannelError>(&got)) co_return lost(i, *e);
      const json& m = std::get<json>(got);
      const std::string type = text_field(m, "type");
      if (type == "ping") continue;
      if (type == "loaded" &&
          peer_rule(children_[i].phase, MessageType::kLoaded) == Rule::kAccept) {
        children_[i].phase = peer_after_receive(children_[i].phase, MessageType::kLoaded);
        ports_.push_back(ports_from_json(m.value("ports", json::object())));
        auto listeners = loaded_listeners(m);
        if (listeners.empty() && ports_.back().count(0) != 0)
          listeners.push_back(ports_.back().at(0));
        negotiated_.push_back(std::move(listeners));
        break;
      }
      if (auto problem = note(i, m); !problem.empty()) co_return problem;
      co_return fmt::format("{} answered the load with '{}'", describe(i), type);
    }
  }
  co_return std::string();
}

void ChildSet::listen(const std::function<void(std::size_t, json)>& on_message,
                      const std::function<void(std::size_t, ChannelError)>& on_lost) {
  for (std::size_t i = 0; i < children_.size(); ++i) {
    children_[i].reader_alive = true;
    asio::co_spawn(
        context_,
        [this, i, alive = alive_, on_message, on_lost]() -> asio::awaitable<void> {
          for (;;) {
            auto got = co_await children_[i].channel->receive();
            if (!*alive) co_return;
            if (auto* error = std::get_if<ChannelError>(&got)) {
              if (!closing_) on_lost(i, std::move(*error));  // a link we closed is no loss
              break;
            }
            on_message(i, std::get<json>(std::move(got)));
            if (!*alive) co_return;
          }
          children_[i].reader_alive = false;
        },
        asio::detached);
  }
}

asio::awaitable<std::string> ChildSet::send_all(json m) {
  std::string first;
  for (std::size_t i = 0; i < children_.size(); ++i) {
    Channel& channel = *children_[i].channel;
    if (!channel.is_open()) continue;
    children_[i].phase = peer_after_send(children_[i].phase, message_type(text_field(m, "type")));
    auto sent = co_await channel.send(m);
    if (auto* e = std::get_if<ChannelError>(&sent); e != nullptr && first.empty())
      first = lost(i, *e);
  }
  co_return first;
}

std::string ChildSet::note(std::size_t i, const json& m) {
  Child& c = children_[i];
  const std::string type_name = text_field(m, "type");
  const MessageType type = message_type(type_name);
  if (const Rule rule = peer_rule(c.phase, type); rule != Rule::kAccept) {
    return fmt::format("{} sent {}", describe(i), unexpected(rule, type_name, c.phase));
  }
  c.phase = peer_after_receive(c.phase, type);
  switch (type) {
    case MessageType::kStepDone: {
      const auto step = uint_field(m, "step");
      // A master's child counts its connects (the slaves' end_step needs them); a slave's has none.
      const auto connected = settings_.master_side ? host_port_counts_from(m) : HostPortCounts{};
      if (!step || !connected) return fmt::format("{} sent a malformed step_done", describe(i));
      c.steps_done = static_cast<std::size_t>(*step);
      c.connected = *connected;
      return {};
    }
    case MessageType::kResults: c.results = m; return {};
    case MessageType::kWritten:
      if (!append_written(m, c.written))
        return fmt::format("{} sent a malformed written message", describe(i));
      return {};
    case MessageType::kDrained:
      if (!uint_field(m, "step"))
        return fmt::format("{} sent a malformed drained message", describe(i));
      c.drained = m;
      return {};
    case MessageType::kRejected:
      return fmt::format("{} could not set up the run: {}", describe(i), text_field(m, "message"));
    case MessageType::kError: return fmt::format("{}: {}", describe(i), text_field(m, "message"));
    case MessageType::kAbort:
      return fmt::format("{} aborted the run: {}", describe(i), text_field(m, "reason"));
    default: return {};  // ping, and the rest the table accepts without a handler
  }
}

std::string ChildSet::lost(std::size_t i, const ChannelError& error) {
  Child& c = children_[i];
  // A child that dies closes its end: its exit status says why (it is reaped here).
  const std::string ended = c.process.exit_status(std::chrono::milliseconds(500));
  if (!ended.empty()) return fmt::format("{} {}", describe(i), ended);
  return fmt::format("{}: {}", describe(i), error.message);
}

bool ChildSet::all_done(std::size_t step) const {
  return std::all_of(children_.begin(), children_.end(),
                     [step](const Child& c) { return c.steps_done && *c.steps_done >= step; });
}

bool ChildSet::all_drained(std::size_t step) const {
  return std::all_of(children_.begin(), children_.end(), [step](const Child& c) {
    return c.drained && uint_field(*c.drained, "step").value_or(0) >= step;
  });
}

std::vector<engine::ConnectionBytes> ChildSet::take_written() {
  std::vector<engine::ConnectionBytes> out;
  for (auto& c : children_) {
    out.insert(out.end(), c.written.begin(), c.written.end());
    c.written.clear();
  }
  return out;
}

HostPortCounts ChildSet::connected() const {
  HostPortCounts out;
  for (const auto& c : children_) {
    for (const auto& [key, n] : c.connected) out[key] += n;
  }
  return out;
}

std::vector<json> ChildSet::drained() const {
  std::vector<json> out;
  for (const auto& c : children_) out.push_back(c.drained.value_or(json::object()));
  return out;
}

asio::awaitable<std::string> ChildSet::send_written(
    std::size_t step, const std::vector<engine::ConnectionBytes>& peer_written) {
  for (std::size_t i = 0; i < children_.size(); ++i) {
    const std::uint32_t shard = settings_.first_shard + static_cast<std::uint32_t>(i);
    std::vector<engine::ConnectionBytes> mine;
    for (const auto& w : peer_written) {
      if (w.strand % settings_.shard_count == shard) mine.push_back(w);
    }
    for (json& m : written_messages(step, mine, 0)) {
      auto sent = co_await children_[i].channel->send(std::move(m));
      if (auto* e = std::get_if<ChannelError>(&sent)) co_return lost(i, *e);
    }
  }
  co_return std::string();
}

json ChildSet::merged_drained(std::size_t step) const {
  std::vector<json> drained;
  for (const auto& c : children_) {
    if (c.drained) drained.push_back(*c.drained);
  }
  return merge_drained(step, drained);
}

bool ChildSet::all_results() const {
  return std::all_of(children_.begin(), children_.end(),
                     [](const Child& c) { return c.results.has_value(); });
}

std::string ChildSet::merge_results(results::RunResult& into) const {
  for (std::size_t i = 0; i < children_.size(); ++i) {
    if (!children_[i].results) return fmt::format("{} sent no results", describe(i));
    std::string error;
    auto part =
        results::run_result_from_json(children_[i].results->value("result", json::object()), error);
    if (!part) return fmt::format("{}: {}", describe(i), error);
    results::merge_into(into, *part);
  }
  return {};
}

std::vector<json> ChildSet::results() const {
  std::vector<json> out;
  for (const auto& c : children_) out.push_back(c.results.value_or(json::object()));
  return out;
}

std::vector<pid_t> ChildSet::pids() const {
  std::vector<pid_t> out;
  for (const auto& c : children_) out.push_back(c.process.pid());
  return out;
}

asio::awaitable<void> ChildSet::close() {
  closing_ = true;
  for (auto& c : children_) {
    if (c.channel->is_open()) {
      json bye = message("bye");
      auto sent = co_await c.channel->send(std::move(bye));
      (void)sent;
    }
    c.channel->close();
  }
  // The readers hold references into the children: wait until each has left.
  asio::steady_timer poll(context_);
  while (std::any_of(children_.begin(), children_.end(),
                     [](const Child& c) { return c.reader_alive; })) {
    poll.expires_after(std::chrono::milliseconds(5));
    co_await poll.async_wait(kAwait);
  }
  const auto deadline = std::chrono::steady_clock::now() + kExitGrace;
  for (auto& c : children_) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    c.process.reap(std::max(left, std::chrono::milliseconds(0)));
  }
}

}  // namespace volley::control
