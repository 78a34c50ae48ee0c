#pragma once
// One row per flowop kind: what the profile language, the mirror, the validator and the engine
// need to know about a flowop beyond its data (model.hpp). Plain constexpr data, so that any
// module may read it and the checks below run at compile time.
//
// A kind is a name the profile writes (write and send are two kinds of one spec, WriteOp);
// recvfile is a kind only mirror() produces. The per-spec code (building a spec from its options,
// its slave counterpart, its text) is in src/profile/flowop_specs.cpp; execution is the engine's.
#include <array>
#include <concepts>
#include <cstddef>
#include <cstdint>
#include <string_view>
#include <type_traits>
#include <utility>
#include <variant>

#include "volley/profile/model.hpp"

namespace volley::profile {

/// Indexes kFlowopTraits; kCount is the number of kinds, not a kind.
enum class FlowopKind : std::uint8_t {
  kConnect,
  kAccept,
  kDisconnect,
  kWrite,
  kSend,
  kRead,
  kRecv,
  kSendfile,
  kSendfilev,
  kThink,
  kNop,
  kRecvfile,
  kCount,
};

inline constexpr std::size_t kFlowopKinds = static_cast<std::size_t>(FlowopKind::kCount);

/// What a flowop does to its connection (conn=N, or the strand's anonymous one).
enum class OnConnection : std::uint8_t {
  kNone,     ///< runs on no connection (its conn= is 0 all the same)
  kDials,    ///< opens one: connects to remotehost
  kAccepts,  ///< opens one: accepts it from remotehost
  kUses,     ///< needs one open
  kCloses,   ///< closes one
};

constexpr bool opens(OnConnection c) {
  return c == OnConnection::kDials || c == OnConnection::kAccepts;
}

/// Which way a flowop moves data on its connection.
enum class Data : std::uint8_t { kNone, kSends, kReceives };

/// The index of `T` among FlowopSpec's alternatives.
template <class T>
constexpr std::size_t spec_index = []<std::size_t... I>(std::index_sequence<I...>) {
  std::size_t index = std::variant_size_v<FlowopSpec>;
  const bool found =
      ((std::is_same_v<T, std::variant_alternative_t<I, FlowopSpec>> && (index = I, true)) || ...);
  return found ? index : std::variant_size_v<FlowopSpec>;
}
(std::make_index_sequence<std::variant_size_v<FlowopSpec>>{});

struct FlowopTraits {
  FlowopKind kind = FlowopKind::kCount;
  std::string_view name;  ///< as the profile writes it, and as stats name it
  /// The options it takes besides those every flowop takes (count, conn, canfail, non_blocking),
  /// space-separated; each names a row of src/profile/option_table.cpp.
  std::string_view options;
  OnConnection connection = OnConnection::kNone;
  Data data = Data::kNone;
  FlowopKind mirror = FlowopKind::kCount;  ///< what the slave runs for it (see mirror()); itself
                                           ///< for a kind that is not written
  std::size_t spec = std::variant_size_v<FlowopSpec>;  ///< the FlowopSpec alternative it builds
  bool written = true;  ///< a profile may name it; false: mirror() makes it
};

/// Indexed by FlowopKind. Kinds of one spec share `connection` and `data` (checked below).
inline constexpr std::array<FlowopTraits, kFlowopKinds> kFlowopTraits = [] {
  using K = FlowopKind;
  using C = OnConnection;
  using D = Data;
  // name, options, connection, data, mirror, spec, written
  return std::array<FlowopTraits, kFlowopKinds>{{
      {K::kConnect, "connect",
       "remotehost protocol port wndsz tcp_nodelay cc srcaddr timeout tls_version "
       "cipher resume ktls engine gso",
       C::kDials, D::kNone, K::kAccept, spec_index<ConnectOp>, true},
      {K::kAccept, "accept",
       "remotehost protocol port wndsz tcp_nodelay cc timeout tls_version cipher resume ktls "
       "engine gso",
       C::kAccepts, D::kNone, K::kConnect, spec_index<AcceptOp>, true},
      {K::kDisconnect, "disconnect", "", C::kCloses, D::kNone, K::kDisconnect,
       spec_index<DisconnectOp>, true},
      {K::kWrite, "write", "size rsize timeout zerocopy", C::kUses, D::kSends, K::kRead,
       spec_index<WriteOp>, true},
      {K::kSend, "send", "size rsize timeout zerocopy", C::kUses, D::kSends, K::kRecv,
       spec_index<WriteOp>, true},
      {K::kRead, "read", "size rsize timeout", C::kUses, D::kReceives, K::kWrite,
       spec_index<ReadOp>, true},
      {K::kRecv, "recv", "size rsize timeout", C::kUses, D::kReceives, K::kSend, spec_index<ReadOp>,
       true},
      {K::kSendfile, "sendfile", "size dir file", C::kUses, D::kSends, K::kRecvfile,
       spec_index<SendfileOp>, true},
      {K::kSendfilev, "sendfilev", "size dir nfiles", C::kUses, D::kSends, K::kRecvfile,
       spec_index<SendfilevOp>, true},
      {K::kThink, "think", "duration busy idle", C::kNone, D::kNone, K::kThink, spec_index<ThinkOp>,
       true},
      {K::kNop, "nop", "", C::kNone, D::kNone, K::kNop, spec_index<NopOp>, true},
      // The slave's side of sendfile and sendfilev: reads exactly the bytes of the master's files.
      {K::kRecvfile, "recvfile", "", C::kUses, D::kReceives, K::kRecvfile, spec_index<RecvFileOp>,
       false},
  }};
}();

constexpr const FlowopTraits& traits(FlowopKind kind) {
  return kFlowopTraits[static_cast<std::size_t>(kind)];
}

/// The first kind that builds spec alternative `index` (kCount when none does).
constexpr FlowopKind first_kind_of_spec(std::size_t index) {
  for (const auto& row : kFlowopTraits) {
    if (row.spec == index) return row.kind;
  }
  return FlowopKind::kCount;
}

/// first_kind_of_spec() of every alternative, so that traits(spec) is two array reads.
inline constexpr std::array<FlowopKind, std::variant_size_v<FlowopSpec>> kKindOfSpec = [] {
  std::array<FlowopKind, std::variant_size_v<FlowopSpec>> by{};
  for (std::size_t i = 0; i < by.size(); ++i) by[i] = first_kind_of_spec(i);
  return by;
}();

/// The row of a spec: `connection` and `data` are the same for every kind of one spec.
constexpr const FlowopTraits& traits(const FlowopSpec& spec) {
  return traits(kKindOfSpec[spec.index()]);
}

/// The kind of `op`: the one its type names, or the first of its spec when the type names
/// another (a Flowop built by hand).
constexpr FlowopKind kind_of(const Flowop& op) {
  for (const auto& row : kFlowopTraits) {
    if (row.name == op.type && row.spec == op.spec.index()) return row.kind;
  }
  return traits(op.spec).kind;
}

/// The options of a flowop that opens a connection, else nullptr.
constexpr const ConnectionOptions* connection_options(const FlowopSpec& spec) {
  return std::visit(
      [](const auto& s) -> const ConnectionOptions* {
        if constexpr (requires { s.connection; }) {
          return &s.connection;
        } else {
          return nullptr;
        }
      },
      spec);
}

/// Where a flowop that sends or receives files takes their sizes from, else nullptr.
constexpr const FileSource* file_source(const FlowopSpec& spec) {
  return std::visit(
      [](const auto& s) -> const FileSource* {
        if constexpr (requires { s.source; }) {
          return &s.source;
        } else {
          return nullptr;
        }
      },
      spec);
}

// A kind without a row, a row out of enum order, or a spec no kind builds fails here.
static_assert(
    [] {
      for (std::size_t i = 0; i < kFlowopKinds; ++i) {
        const FlowopTraits& row = kFlowopTraits[i];
        if (static_cast<std::size_t>(row.kind) != i || row.name.empty()) return false;
        if (row.mirror == FlowopKind::kCount) return false;
        if (row.spec >= std::variant_size_v<FlowopSpec>) return false;
      }
      return true;
    }(),
    "every FlowopKind needs its row in kFlowopTraits, in enum order");
static_assert(
    [] {
      for (std::size_t i = 0; i < std::variant_size_v<FlowopSpec>; ++i) {
        if (first_kind_of_spec(i) == FlowopKind::kCount) return false;
      }
      return true;
    }(),
    "every FlowopSpec alternative needs a row in kFlowopTraits");
static_assert(
    [] {
      for (const auto& row : kFlowopTraits) {
        const FlowopTraits& first = traits(first_kind_of_spec(row.spec));
        if (row.connection != first.connection || row.data != first.data) return false;
        // The slave's counterpart opens, uses or closes what the master's does (mirror() runs on a
        // master's profile, where kinds that are not written do not occur).
        if (!row.written) continue;
        const FlowopTraits& peer = traits(row.mirror);
        const bool paired = opens(row.connection)
                                ? opens(peer.connection) && peer.connection != row.connection
                                : peer.connection == row.connection;
        const bool data_paired = row.data == Data::kNone
                                     ? peer.data == Data::kNone
                                     : peer.data != Data::kNone && peer.data != row.data;
        if (!paired || !data_paired) return false;
      }
      return true;
    }(),
    "kinds of one spec share their connection and data traits, and a kind's mirror "
    "opens what it opens, from the other end, and moves its data the other way");

// connection_sites() reads what a kind that opens connects to from its spec's `connection`.
static_assert(
    []<std::size_t... I>(std::index_sequence<I...>) {
      return ((!opens(traits(first_kind_of_spec(I)).connection) ||
               requires(std::variant_alternative_t<I, FlowopSpec> s) {
                 { s.connection } -> std::convertible_to<ConnectionOptions>;
               }) &&
              ...);
    }(std::make_index_sequence<std::variant_size_v<FlowopSpec>>{}),
    "a spec whose kinds open connections needs a `ConnectionOptions connection` member");

}  // namespace volley::profile
