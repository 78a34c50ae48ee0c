// The master's run before its first step: reach every slave (connect, greet), have each load its
// mirror of the profile, and build the master's own side (its engine, and its child processes
// when the side is spread over several).
#include <algorithm>
#include <cstring>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/connect.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <fmt/format.h>

#include "master_state.hpp"
#include "volley/sampling/resident_memory.hpp"
#include "volley/control/child_wire.hpp"
#include "volley/control/codec.hpp"
#include "volley/control/message.hpp"
#include "volley/core/host_port.hpp"
#include "volley/process/process_count.hpp"

namespace volley::control {

using namespace master_events;  // NOLINT(google-build-using-namespace): this file handles them

namespace asio = boost::asio;
using asio::awaitable;
using asio::ip::tcp;
using nlohmann::json;

namespace {

constexpr auto kAwait = asio::as_tuple(asio::use_awaitable);
constexpr auto kHandshakeTimeout = std::chrono::seconds(10);
constexpr auto kLoadTimeout = std::chrono::seconds(60);

/// Reads slave `i`'s messages into the run's events until its channel ends: the greeting (and
/// authentication) first, here, since the channel must be keyed before the next frame is read.
awaitable<void> read_slave(std::vector<SlaveSession>& slaves, EventQueue<MasterEvent>& events,
                           std::size_t i, const std::optional<Secret>& key) {
  Channel& channel = *slaves[i].channel;
  auto greeting = co_await master_handshake(channel, key);
  if (auto* greeted = std::get_if<MasterGreeting>(&greeting)) {
    if (greeted->keys) slaves[i].data_mask = greeted->keys->data_mask;
    events.push(SlaveMessage{i, std::move(greeted->slave_hello)});
  } else {
    // Nothing more is said to a slave that failed the handshake.
    channel.close();
    json refused = message("error", {{"message", std::get<std::string>(greeting)}});
    events.push(SlaveMessage{i, std::move(refused)});
    events.push(ReaderExited{i});
    co_return;
  }
  for (;;) {
    auto got = co_await channel.receive();
    if (auto* error = std::get_if<ChannelError>(&got)) {
      events.push(SlaveLost{i, std::move(*error)});
      break;
    }
    events.push(SlaveMessage{i, std::get<json>(std::move(got))});
  }
  events.push(ReaderExited{i});
}

}  // namespace

awaitable<void> MasterRun::State::reach_slaves() {
  for (std::size_t i = 0; i < settings.slaves.size() && failure.empty(); ++i) {
    const SlaveAddress& address = settings.slaves[i];
    slaves.push_back(SlaveSession{.address = address});
    tcp::resolver resolver(context);
    auto [resolve_ec, endpoints] = co_await resolver.async_resolve(
        address.control_host, std::to_string(address.control_port), kAwait);
    if (resolve_ec) {
      fail(fmt::format("cannot resolve slave host '{}': {}", address.control_host,
                       resolve_ec.message()));
      break;
    }
    tcp::socket socket(context);
    asio::steady_timer guard(context);
    guard.expires_after(settings.connect_timeout);
    bool timed_out = false;
    guard.async_wait([&](const boost::system::error_code& ec) {
      if (ec) return;
      timed_out = true;
      boost::system::error_code ignored;
      socket.close(ignored);
    });
    auto [connect_ec, endpoint] = co_await asio::async_connect(socket, endpoints, kAwait);
    guard.cancel();
    co_await asio::post(context, asio::use_awaitable);  // let the cancelled guard finish
    if (connect_ec) {
      fail(fmt::format(
          "cannot reach slave '{}' at {}: {}{}", address.host,
          core::format_host_port(address.control_host, address.control_port),
          timed_out ? fmt::format("no answer within {} ms", settings.connect_timeout.count())
                    : connect_ec.message(),
          connect_ec == asio::error::connection_refused ? " (is `volley serve` running there?)"
                                                        : ""));
      break;
    }
    slaves[i].data_address = endpoint.address();
    slaves[i].channel = std::make_unique<Channel>(std::move(socket));
    slaves[i].reader_alive = true;
    asio::co_spawn(context, read_slave(slaves, events, i, settings.key), asio::detached);
  }
  co_await wait_until(
      [&] {
        return all_slaves([](const SlaveSession& s) { return s.phase != PeerPhase::kGreeting; });
      },
      kHandshakeTimeout, "the slaves' greeting");
}

awaitable<void> MasterRun::State::load_slaves() {
  core::Diagnostics diags;
  file_sets = engine::scan_file_sets(*settings.profile, diags);
  if (!diags.has_errors()) plan = engine::compile(*settings.profile, file_sets, diags);
  if (!plan) {
    fail(diags.format(nullptr));
    co_return;
  }
  if (!engine::tls_uses(*plan).accepts.empty()) {
    auto made = transport::TlsIdentity::generate();
    if (auto* why = std::get_if<std::string>(&made)) {
      fail(*why);
      co_return;
    }
    tls_identity =
        std::make_shared<const transport::TlsIdentity>(std::get<transport::TlsIdentity>(made));
  }
  const std::string random = random_bytes(sizeof token);
  std::memcpy(&token, random.data(), sizeof token);
  for (std::size_t i = 0; i < slaves.size() && failure.empty(); ++i) {
    // Slave i's data connections carry token + i (transport::RunTokens).
    const std::uint32_t its_token = token + static_cast<std::uint32_t>(i);
    LoadRequest load{settings.profile_text,
                     settings.profile_file,
                     settings.variables,
                     slaves[i].address.host,
                     settings.seed,
                     its_token ^ slaves[i].data_mask,
                     1,
                     settings.slave_workers,
                     file_sets,
                     settings.record_latency,
                     settings.sample_tcp};
    if (settings.max_duration) load.max_duration_ns = settings.max_duration->count();
    if (tls_identity) load.tls_pins = {tls_identity->fingerprint()};
    json load_message = to_json(load);
    // A load beyond the slave's limits would be cut off by a reset and its reason lost: say it
    // here, in the slave's words.
    const auto frame_bytes = encode_frame(load_message).size() - 4;
    if (auto problem = check_load_fits(slaves[i].limits, frame_bytes, load.profile_text.size());
        !problem.empty()) {
      fail(fmt::format("slave {}: {}", slaves[i].address.host, problem));
      break;
    }
    co_await send_to(i, std::move(load_message));
  }
  co_await wait_until(
      [&] { return all_slaves([](const SlaveSession& s) { return s.ports.has_value(); }); },
      kLoadTimeout, "the slaves to load the profile");
}

namespace {

/// Each slave connects back to the master's address on its own control connection, and slaves
/// on different networks reach the master by different addresses: listen on all of them (the
/// run token keeps strangers out). IPv6's wildcard also takes IPv4 (dual stack).
asio::ip::address listen_address_for(const std::vector<SlaveSession>& slaves) {
  if (slaves.empty()) return asio::ip::address_v4::loopback();
  bool v6 = false;
  for (const auto& s : slaves) {
    boost::system::error_code ec;
    const auto local = s.channel->socket().local_endpoint(ec).address();
    v6 = v6 || (!ec && local.is_v6() && !local.to_v6().is_v4_mapped());
  }
  return v6 ? asio::ip::address(asio::ip::address_v6::any())
            : asio::ip::address(asio::ip::address_v4::any());
}

}  // namespace

std::vector<std::string> MasterRun::State::slave_fingerprints() const {
  std::vector<std::string> pins;
  for (const auto& s : slaves) {
    if (!s.tls_fingerprint.empty()) pins.push_back(s.tls_fingerprint);
  }
  return pins;
}

awaitable<void> MasterRun::State::build_local_side() {
  engine::EngineConfig config;
  config.workers = settings.workers;
  config.seed = settings.seed;
  config.token = token;
  config.peers = static_cast<std::uint32_t>(std::max<std::size_t>(1, slaves.size()));
  config.record_latency = settings.record_latency;
  config.sample_tcp = settings.sample_tcp;
  config.count_strands = settings.count_strands;
  config.io = settings.io;
  for (std::size_t i = 0; i < slaves.size(); ++i) {
    const auto& s = slaves[i];
    const auto port = s.ports->count(0) != 0 ? s.ports->at(0) : std::uint16_t{0};
    config.targets[s.address.host] =
        engine::HostTarget{s.data_address, port, s.shard_ports, static_cast<std::uint32_t>(i)};
  }
  config.listen_address = listen_address_for(slaves);
  config.on_txn_done = [this](std::size_t step) {
    asio::post(context, [this, step] { events.push(LocalStepDone{step}); });
  };
  processes =
      process::process_count(*settings.profile, *plan, process::machine_budget(settings.processes));
  if (processes > 1) {
    config.shard_count = processes;
    ChildSetSettings children_settings;
    children_settings.executable = settings.child_executable;
    children_settings.master_side = true;
    children_settings.first_shard = 1;
    children_settings.shard_count = processes;
    children_settings.workers =
        std::max<std::size_t>(1, (settings.workers + processes - 1) / processes);
    config.workers = children_settings.workers;
    auto spawned = ChildSet::spawn(context, children_settings);
    if (auto* problem = std::get_if<std::string>(&spawned)) {
      fail(*problem);
    } else {
      children = std::move(std::get<std::unique_ptr<ChildSet>>(spawned));
      LoadRequest load{settings.profile_text,
                       settings.profile_file,
                       settings.variables,
                       "",
                       settings.seed,
                       token,
                       config.peers,
                       children_settings.workers,
                       file_sets,
                       settings.record_latency,
                       settings.sample_tcp};
      load.listen_address = config.listen_address.to_string();
      load.count_strands = settings.count_strands;
      load.io = settings.io;
      if (settings.max_duration) load.max_duration_ns = settings.max_duration->count();
      load.tls_pins = slave_fingerprints();
      load.tls_ca_file = settings.tls_ca_file;
      if (tls_identity) {  // the children accept as the master: with its certificate
        load.tls_cert_pem = tls_identity->cert_pem();
        load.tls_key_pem = tls_identity->key_pem();
      }
      if (auto trouble = co_await children->load(std::move(load)); !trouble.empty()) fail(trouble);
      log(fmt::format("the master's side runs in {} processes", processes));
    }
  }
  if (const transport::TlsUses uses = engine::tls_uses(*plan); uses.any() && failure.empty()) {
    auto made = transport::TlsSetup::make(
        uses, tls_identity, transport::TlsTrust{slave_fingerprints(), settings.tls_ca_file});
    if (auto* why = std::get_if<std::string>(&made)) {
      fail(*why);
      co_return;
    }
    config.tls = std::get<std::shared_ptr<const transport::TlsSetup>>(std::move(made));
  }
  rss_before = sampling::resident_bytes();
  try {
    engine = std::make_unique<engine::Engine>(*plan, std::move(config));
  } catch (const std::exception& e) {  // out of memory or descriptors, no io_uring
    fail(fmt::format("cannot build the run: {}", e.what()));
    co_return;
  }
  if (auto problem = engine->open_listeners(context); !problem.empty()) fail(problem);
}

}  // namespace volley::control
