#pragma once
// What each side wrote on each data connection during one step, and what the end-of-step drain
// found. After a step's cut each side stops writing and tells the other how many bytes it wrote
// on every connection it still has open; the reader then reads until it has them all (the drain),
// so both sides count the same bytes and the next step starts with every stream in step.
#include <cstdint>
#include <string>
#include <vector>

namespace volley::engine {

/// One data connection, named alike on both sides: a strand's connection id is a pool, and
/// `serial` counts the connections that strand opened (connect) or took (accept) under that id
/// with that peer, from 0, in the same order on both ends.
struct ConnectionBytes {
  /// `serial` of the entry that sums, for one strand and connection id, the bytes written on the
  /// connections that side closed during the step (one entry, however many: a connection storm
  /// closes thousands). The reader finds them on its connections of that id that the writer did
  /// not list: open ones, and ones its strand never accepted.
  static constexpr std::uint32_t kClosedSerial = UINT32_MAX;
  /// `serial` of the entry that says, for one strand, connection id and peer, how many
  /// connections that side has opened or taken under it since the run began (in `bytes`), sent
  /// for every id whose count moved in the step. The other side waits in its drain until it has
  /// that many too: a connection the peer made near the step's end, still on its way through the
  /// listener, is then this step's, never taken by the next step's accept in place of its own.
  static constexpr std::uint32_t kOpenedSerial = UINT32_MAX - 1;
  std::uint32_t group = 0;
  std::uint32_t strand = 0;
  std::uint32_t conn = 0;
  std::uint32_t serial = 0;
  std::uint64_t bytes = 0;  ///< bytes written on it during the step
  /// A master's: the slave (its index) the connection joins it to, for serials are numbered
  /// per slave. A slave's: 0 (it has one master). Not on the wire between master and slave.
  std::uint32_t peer = 0;
  friend bool operator==(const ConnectionBytes&, const ConnectionBytes&) = default;
};

/// A connection the drain could not bring level with its peer's writes.
struct DrainShortfall {
  ConnectionBytes expected;  ///< what the peer wrote
  std::uint64_t got = 0;     ///< what this side read of it
  std::string why;           ///< "not there within the grace", "reset by peer", ...
};

/// What a drain found: the connections it left short, and how many it found level (this side
/// read exactly the bytes the peer wrote on them during the step: the per-connection comparison
/// of the two sides' counts).
struct DrainOutcome {
  std::vector<DrainShortfall> shortfalls;
  std::uint64_t read_exactly = 0;
};

/// "group 'g' strand 3 connection 2 (#0): read 100 of the 200 bytes the peer wrote (why)".
std::string describe(const DrainShortfall& s, const std::vector<std::string>& group_names);

}  // namespace volley::engine
