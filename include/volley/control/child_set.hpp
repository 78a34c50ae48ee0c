#pragma once
// The child processes one side of a run is spread over (docs/architecture.md, "Processes"). Each
// child is a `volley serve --child-fd` session of this process over a socketpair, spoken to in
// the ordinary control protocol: this process is to its children what a master is to its slaves.
// Each child runs one shard of the plan (strand s of every group when s % shards == its shard),
// with its own workers and its own data listener, and sends back its result, which merges here
// as `volley merge` merges masters.
//
// Thread: the control context. A ChildSet kills and reaps every child when it is destroyed, so
// no child outlives the run; a child also dies with this process (PR_SET_PDEATHSIG).
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include <boost/asio/awaitable.hpp>
#include <boost/asio/io_context.hpp>
#include <nlohmann/json.hpp>

#include "volley/control/channel.hpp"
#include "volley/control/session.hpp"
#include "volley/control/child_wire.hpp"
#include "volley/control/connected_wire.hpp"
#include "volley/control/message.hpp"
#include "volley/engine/engine.hpp"
#include "volley/results/run_result.hpp"
#include "volley/engine/step_bytes.hpp"
#include "volley/sampling/cpu_sampler.hpp"
#include "volley/process/child_process.hpp"

namespace volley::control {

struct ChildSetSettings {
  std::string executable = "/proc/self/exe";  ///< the volley binary the children run
  bool master_side = false;                   ///< children run the profile as written (master)
  std::uint32_t first_shard = 0;              ///< shards first_shard..shard_count-1 are children
  std::uint32_t shard_count = 1;
  std::size_t workers = 1;  ///< worker threads per child
};

class ChildSet {
 public:
  /// Starts one child per shard. Returns the set or why it could not start.
  static std::variant<std::unique_ptr<ChildSet>, std::string> spawn(
      boost::asio::io_context& context, ChildSetSettings settings);
  ~ChildSet();
  ChildSet(const ChildSet&) = delete;
  ChildSet& operator=(const ChildSet&) = delete;

  /// Greets every child and has it load `load` as its own shard, all at once; waits until each
  /// has loaded. Returns the first problem (naming the child), or "".
  boost::asio::awaitable<std::string> load(LoadRequest load);
  /// After load(): each child's data listener ports (requested -> bound).
  [[nodiscard]] const std::vector<std::map<std::uint16_t, std::uint16_t>>& ports() const {
    return ports_;
  }
  /// After load(): each child's negotiated listeners (Engine::negotiated_ports()).
  [[nodiscard]] const std::vector<std::vector<std::uint16_t>>& negotiated() const {
    return negotiated_;
  }
  /// From now on, each child's messages and its loss come through these (on the context).
  void listen(const std::function<void(std::size_t, nlohmann::json)>& on_message,
              const std::function<void(std::size_t, ChannelError)>& on_lost);
  /// Sends `m` to every child still linked; returns the first problem, or "".
  boost::asio::awaitable<std::string> send_all(nlohmann::json m);

  /// Takes in one message from child `i`. Returns the problem it reports, naming the child (an
  /// error, a rejection, an abort, an unexpected message), or "".
  std::string note(std::size_t i, const nlohmann::json& m);
  /// The sentence for a child whose link broke: its name and how it ended.
  std::string lost(std::size_t i, const ChannelError& error);
  /// Every child has reported step `step` done.
  [[nodiscard]] bool all_done(std::size_t step) const;
  /// Every child has drained step `step` (its `drained`).
  [[nodiscard]] bool all_drained(std::size_t step) const;
  /// What the children wrote in the step ending (their `written`), taken.
  std::vector<engine::ConnectionBytes> take_written();
  /// A master's children: the TCP data connections they established since the run began, per
  /// slave host and port, as of their last step_done.
  [[nodiscard]] HostPortCounts connected() const;
  /// Each child's last `drained` message, in shard order.
  [[nodiscard]] std::vector<nlohmann::json> drained() const;
  /// Sends each child (shard first_shard + i) the entries of `peer_written` for its own strands
  /// (strand % shard_count) as `written` messages. Returns the first problem, or "".
  boost::asio::awaitable<std::string> send_written(
      std::size_t step, const std::vector<engine::ConnectionBytes>& peer_written);
  /// The children's `drained` for `step` as one message: the listed shortfalls (at most five)
  /// and their total.
  [[nodiscard]] nlohmann::json merged_drained(std::size_t step) const;
  /// Every child has sent its results.
  [[nodiscard]] bool all_results() const;
  /// Merges every child's result into `into`; returns a problem, or "".
  std::string merge_results(results::RunResult& into) const;
  /// The children's results messages (cpu, nic, system), in shard order.
  [[nodiscard]] std::vector<nlohmann::json> results() const;

  /// Says goodbye, closes the links, waits for the readers, and reaps every child (a short grace
  /// to exit by itself, then SIGKILL).
  boost::asio::awaitable<void> close();
  [[nodiscard]] std::size_t size() const { return children_.size(); }
  [[nodiscard]] std::string describe(std::size_t i) const {
    return children_[i].process.describe();
  }
  [[nodiscard]] std::vector<pid_t> pids() const;

 private:
  struct Child {
    process::ChildProcess process;
    std::unique_ptr<Channel> channel;
    bool reader_alive = false;
    PeerPhase phase = PeerPhase::kGreeting;  ///< moved by what is sent to it and what it says
    std::optional<std::size_t> steps_done = {};
    std::optional<nlohmann::json> results = {};
    std::vector<engine::ConnectionBytes> written = {};
    std::optional<nlohmann::json> drained = {};
    HostPortCounts connected = {};  ///< a master's child: its connects so far, from its step_done
  };
  ChildSet(boost::asio::io_context& context, ChildSetSettings settings)
      : context_(context), settings_(std::move(settings)) {}
  boost::asio::io_context& context_;
  ChildSetSettings settings_;
  std::vector<Child> children_;
  std::vector<std::map<std::uint16_t, std::uint16_t>> ports_;
  std::vector<std::vector<std::uint16_t>> negotiated_;
  bool closing_ = false;
  std::shared_ptr<bool> alive_ = std::make_shared<bool>(true);
};

/// This process's record for its side's result.
results::ProcessRecord process_record(std::string name, const results::RunResult& result,
                                      std::int64_t rss_before, std::int64_t rss_after,
                                      const std::optional<sampling::CpuUsage>& cpu);

}  // namespace volley::control
