#pragma once
// The executable form of a profile for one run: immutable once compiled, read by every worker.
// Every flowop and transaction gets a dense stat slot so that recording is an array index.
#include <cstdint>
#include <optional>
#include <set>
#include <string>
#include <variant>
#include <vector>

#include "volley/core/diagnostic.hpp"
#include "volley/profile/connections.hpp"
#include "volley/profile/model.hpp"
#include "volley/transport/tls_setup.hpp"

namespace volley::engine {

/// One file a sendfile may send, with the size it had when the run was planned.
struct FileEntry {
  std::string path;
  std::uint64_t size_bytes = 0;
  friend bool operator==(const FileEntry&, const FileEntry&) = default;
};

/// The files behind one `file=`/`dir=` source. The master scans them; the slave receives the sizes
/// (it never sees the files) so that both sides agree on every transfer's length.
struct FileSet {
  profile::FileSource source;
  std::vector<FileEntry> files;
  friend bool operator==(const FileSet&, const FileSet&) = default;
};

/// Which part of its flowop a slot counts: the whole operation, or (a TLS connect or accept) the
/// handshakes within it, full or resumed.
enum class SlotPart : std::uint8_t { kWhole, kHandshake, kResumed };

/// What a stat slot belongs to: a transaction (flowop empty) or one of its flowops.
struct SlotInfo {
  std::size_t group = 0;
  std::size_t txn = 0;
  std::optional<std::size_t> flowop;
  bool uncorrected = false;  ///< a paced transaction's latency from its actual start
  SlotPart part = SlotPart::kWhole;
};

/// The slots of a TLS connect's or accept's handshakes (see SlotPart).
struct HandshakeSlots {
  std::uint32_t full = 0;
  std::uint32_t resumed = 0;
};

struct OpPlan {
  std::string type;  ///< as written ("write", "send", ...)
  profile::FlowopSpec spec;
  profile::FlowopCommon common;
  std::uint32_t slot = 0;
  std::optional<std::size_t> file_set;  ///< index into Plan::file_sets for sendfile ops
  /// A write or read without chunk= or timeout=: on a TCP connection, the strand's loop runs it
  /// itself, without a dispatch or a timer (see Strand::run). Decided once, here: asked
  /// before every operation, it cost ~70 instructions an operation when derived each time.
  bool plain_stream = false;
  std::optional<HandshakeSlots> handshakes;  ///< protocol=tls connects and accepts
  /// A read in a duration-bound transaction, without rate=, whose flowops are all plain reads
  /// (or the mirrors of sendfiles) on one connection: its peer (the mirror, all writes on it)
  /// sends the next ones without waiting for this side, until its end of the step. A slave may
  /// then let the kernel wake such a read only once more than its own bytes are there (see
  /// StreamOps::certain).
  bool read_stream = false;
  /// A write with zerocopy (TCP's MSG_ZEROCOPY: see TcpOps::write). Never a plain_stream: it
  /// goes through its protocol's write.
  bool zerocopy = false;
};

struct TxnPlan {
  std::string name;
  std::variant<profile::Iterations, profile::Duration> bound;
  std::optional<double> rate_per_s;
  std::vector<OpPlan> ops;
  std::uint32_t slot = 0;
  std::optional<std::uint32_t> uncorrected_slot;  ///< paced transactions only
};

struct GroupPlan {
  std::string name;
  std::uint64_t strands = 0;
  std::vector<TxnPlan> txns;
};

struct Plan {
  std::vector<GroupPlan> groups;
  std::size_t txn_count = 0;  ///< the most transactions any group has (the barrier count)
  std::vector<SlotInfo> slots;
  std::vector<FileSet> file_sets;
  std::uint64_t io_buffer_bytes = 0;     ///< per-worker buffer for reads and writes
  std::set<std::uint16_t> accept_ports;  ///< listeners needed; 0 = a negotiated port
  /// Every connect and accept (profile::connection_sites()), so that what reads a plan need not
  /// walk its flowops for them.
  std::vector<profile::ConnectionSite> connections;
  std::uint64_t total_strands = 0;
  /// Some write has zerocopy (MSG_ZEROCOPY, which the io_uring engine's connections do not do:
  /// with it, TCP connections stay on the epoll reactor).
  bool zerocopy = false;
};

/// Reads the files behind every sendfile source of `profile` (recursively for `dir=`). Problems
/// (missing file, empty folder) are located errors.
std::vector<FileSet> scan_file_sets(const profile::Profile& profile, core::Diagnostics& diags);

/// Compiles `profile` with the given file sets (from scan_file_sets on the master, from the
/// master's message on a slave). A source with no file set is a located error.
std::optional<Plan> compile(const profile::Profile& profile, std::vector<FileSet> file_sets,
                            core::Diagnostics& diags);

/// The barrier steps that make up the timed part of a run: those where some group's transaction
/// is bounded by a duration, or every step when none is. CPU, NIC and headline rates cover these.
std::vector<std::size_t> timed_steps(const Plan& plan);

/// The options of every TLS connect and accept of `plan`, each once.
transport::TlsUses tls_uses(const Plan& plan);

/// "txn<N>" style display names used when a profile gives none (1-based like uperf's live lines).
std::string group_display_name(const GroupPlan& g, std::size_t index);
std::string txn_display_name(const TxnPlan& t, std::size_t index);

}  // namespace volley::engine
