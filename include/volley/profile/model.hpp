#pragma once
// The profile model: what the user wrote, typed and located. Plain immutable data once parsed;
// any thread may read it. The engine compiles it into a Plan; mirror() turns a master's profile
// into the slave's view. Units live in the types: byte counts are std::uint64_t named *_bytes,
// times are std::chrono::nanoseconds.
#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "volley/core/source_location.hpp"

namespace volley::profile {

using core::SourceLocation;
using Nanoseconds = std::chrono::nanoseconds;

/// Transport protocols. TCP, UDP and TLS (over TCP) run; the parser rejects the others by name.
enum class Protocol { kTcp, kUdp, kTls };

/// As a profile writes it (protocol=NAME).
constexpr std::string_view protocol_name(Protocol p) {
  switch (p) {
    case Protocol::kTcp: return "tcp";
    case Protocol::kUdp: return "udp";
    case Protocol::kTls: return "tls";
  }
  return "tcp";
}

/// The TLS protocol version a TLS connection offers and accepts (exactly that one).
enum class TlsVersion { k13, k12 };
/// Kernel TLS: after the handshake the record layer's keys go to the kernel (`ktls`).
enum class KernelTls {
  kOff,  ///< OpenSSL encrypts in user space
  kOn,   ///< required: the run fails before any traffic where the kernel has no TLS
  kTry,  ///< used where the kernel has it; else OpenSSL's, and the report says so
};

/// protocol=tls (or ssl): how a connection's TLS is set up. Both sides use the same options.
struct TlsOptions {
  TlsVersion version = TlsVersion::k13;
  /// An OpenSSL cipher list (TLS 1.2) or TLS 1.3 suite names; empty: OpenSSL's defaults.
  std::string cipher;
  /// A connect offers the session of its strand's previous connection of the same id, so
  /// handshakes after the first are resumed (tickets in 1.3, session IDs in 1.2).
  bool resume = false;
  KernelTls ktls = KernelTls::kOff;
  friend bool operator==(const TlsOptions&, const TlsOptions&) = default;
};

/// A byte count that is either fixed (min == max) or uniformly random per call (`rand(MIN,MAX)`).
struct SizeSpec {
  std::uint64_t min_bytes = 0;
  std::uint64_t max_bytes = 0;

  static SizeSpec fixed(std::uint64_t n) { return {n, n}; }
  [[nodiscard]] bool is_random() const { return min_bytes != max_bytes; }
  friend bool operator==(const SizeSpec&, const SizeSpec&) = default;
};

/// Options shared by `connect` and `accept`: how the data connection is made.
struct ConnectionOptions {
  std::string remotehost;  ///< as written, variables expanded; `[v6]` unwrapped
  Protocol protocol = Protocol::kTcp;
  std::optional<std::uint16_t> port;          ///< fixed port on the accepting side; else negotiated
  std::optional<std::uint64_t> window_bytes;  ///< wndsz: SO_SNDBUF and SO_RCVBUF
  bool tcp_nodelay = false;
  std::string congestion_control;  ///< cc=NAME; empty means the system default
  /// srcaddr=A or A-B (connect; tcp or udp): the addresses a connect binds to before it
  /// connects, strand by strand in turn, in order; empty: the kernel picks. Each source address
  /// has its own ephemeral ports (about 28,000 per source, destination and port).
  std::vector<std::string> source_addresses;
  TlsOptions tls;  ///< protocol=tls only
  /// gso (protocol=udp only): a stream of datagrams goes to the kernel as super-buffers it cuts
  /// into datagrams (UDP_SEGMENT), and the socket takes what arrives the same way (UDP_GRO).
  bool gso = false;
  friend bool operator==(const ConnectionOptions&, const ConnectionOptions&) = default;
};

/// Where sendfile data comes from: one file (`file=`) or a random file per call under a folder
/// (`dir=`, searched recursively).
struct FileSource {
  std::string path;
  bool is_directory = false;
  friend bool operator==(const FileSource&, const FileSource&) = default;
};

struct ConnectOp {
  ConnectionOptions connection;
  friend bool operator==(const ConnectOp&, const ConnectOp&) = default;
};
struct AcceptOp {
  ConnectionOptions connection;
  friend bool operator==(const AcceptOp&, const AcceptOp&) = default;
};
struct DisconnectOp {
  friend bool operator==(const DisconnectOp&, const DisconnectOp&) = default;
};
/// `write` and `send`: write `size` bytes, looping until all are written.
/// `chunk_bytes` (from the peer's `rsize` after mirroring) caps the bytes per system call.
/// `zerocopy`: each send asks the kernel not to copy (MSG_ZEROCOPY; TCP only), and its completion
/// says whether it copied anyway.
struct WriteOp {
  SizeSpec size;
  std::optional<std::uint64_t> rsize_bytes;  ///< what the slave uses per call (see mirror())
  std::optional<std::uint64_t> chunk_bytes;
  bool zerocopy = false;
  friend bool operator==(const WriteOp&, const WriteOp&) = default;
};
/// `read` and `recv`: read until `size` bytes are in.
struct ReadOp {
  SizeSpec size;
  std::optional<std::uint64_t> rsize_bytes;
  std::optional<std::uint64_t> chunk_bytes;
  friend bool operator==(const ReadOp&, const ReadOp&) = default;
};
/// `sendfile`: one call sends one whole file, in sendfile(2) calls of at most `chunk_bytes`.
struct SendfileOp {
  FileSource source;
  std::optional<std::uint64_t> chunk_bytes;  ///< size=N
  friend bool operator==(const SendfileOp&, const SendfileOp&) = default;
};
/// `sendfilev`: one call sends `nfiles` files picked from `source`.
struct SendfilevOp {
  FileSource source;
  std::uint64_t nfiles = 1;
  std::optional<std::uint64_t> chunk_bytes;
  friend bool operator==(const SendfilevOp&, const SendfilevOp&) = default;
};
/// Only produced by mirror(): read exactly the bytes the peer's sendfile/sendfilev sends. The file
/// sizes come from the master (the slave has no access to its files).
struct RecvFileOp {
  FileSource source;
  std::uint64_t nfiles = 1;
  friend bool operator==(const RecvFileOp&, const RecvFileOp&) = default;
};
struct ThinkOp {
  Nanoseconds duration{0};
  bool busy = false;  ///< spin instead of sleeping
  friend bool operator==(const ThinkOp&, const ThinkOp&) = default;
};
struct NopOp {
  friend bool operator==(const NopOp&, const NopOp&) = default;
};

using FlowopSpec = std::variant<ConnectOp, AcceptOp, DisconnectOp, WriteOp, ReadOp, SendfileOp,
                                SendfilevOp, RecvFileOp, ThinkOp, NopOp>;

/// Options every flowop may carry.
struct FlowopCommon {
  std::uint64_t count = 1;             ///< times per transaction iteration
  std::uint32_t connection = 0;        ///< conn=N; 0 is the strand's anonymous connection
  bool canfail = false;                ///< a failure is counted, and the strand goes on
  std::optional<Nanoseconds> timeout;  ///< fail the flowop if it has not finished in this time
  friend bool operator==(const FlowopCommon&, const FlowopCommon&) = default;
};

struct Flowop {
  std::string type;  ///< the type as written, lower-cased ("write", "send", ...): names stats
  FlowopSpec spec;
  FlowopCommon common;
  SourceLocation location;
  friend bool operator==(const Flowop&, const Flowop&) = default;
};

struct Iterations {
  std::uint64_t count = 1;
  friend bool operator==(const Iterations&, const Iterations&) = default;
};
struct Duration {
  Nanoseconds length{0};
  friend bool operator==(const Duration&, const Duration&) = default;
};

struct Transaction {
  std::string name;                          ///< `name=` or "" (reports then say "txn<N>")
  std::variant<Iterations, Duration> bound;  ///< iterations=N (default 1) or duration=T
  std::optional<double> rate_per_s;          ///< per strand, transactions per second
  std::vector<Flowop> flowops;
  SourceLocation location;
  friend bool operator==(const Transaction&, const Transaction&) = default;
};

struct Group {
  std::string name;            ///< `name=` or "" (reports then say "group<N>")
  std::uint64_t nthreads = 1;  ///< strands; nprocs is accepted and means the same here
  bool from_nprocs = false;    ///< written as nprocs=
  std::vector<Transaction> transactions;
  SourceLocation location;
  friend bool operator==(const Group&, const Group&) = default;
};

struct Profile {
  std::string name;
  std::string file;  ///< the path it was read from (for messages)
  std::vector<Group> groups;
  SourceLocation location;
  friend bool operator==(const Profile&, const Profile&) = default;
};

}  // namespace volley::profile
