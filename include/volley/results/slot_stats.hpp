#pragma once
// What is counted for one stat slot (one flowop, or one transaction, of one group). The hot path
// only touches a worker's own SlotStats: no locks, no atomics.
#include <array>
#include <cstdint>
#include <string>

#include "volley/results/error_kind.hpp"
#include "volley/stats/latency_histogram.hpp"
#include "volley/stats/tcp_summary.hpp"

namespace volley::results {

/// UDP: what was sent, and what the receiving side saw arrive (from each datagram's header).
/// Zero on TCP. `lost` counts sequence gaps when they are seen; a datagram that then arrives late
/// counts in `late`, so the loss so far is lost - late (and a gap at the very end is seen only by
/// comparing with the sender's `sent`).
struct DatagramCounters {
  std::uint64_t sent = 0;
  std::uint64_t received = 0;    ///< distinct datagrams that arrived
  std::uint64_t lost = 0;        ///< sequence numbers skipped when a later one arrived
  std::uint64_t late = 0;        ///< arrived after a later one (reordered); were counted lost
  std::uint64_t duplicates = 0;  ///< arrived again (not counted in received or bytes' ops)
  std::uint64_t timeouts = 0;    ///< reads that ended with no datagram (timeout=)
  std::uint64_t jitter_ns = 0;   ///< RFC 3550 interarrival jitter, the largest of the connections

  [[nodiscard]] bool any() const { return sent + received + lost + duplicates + timeouts != 0; }
  /// Loss the receiver can see: gaps not filled by a late arrival.
  [[nodiscard]] std::uint64_t net_lost() const { return lost > late ? lost - late : 0; }
  void merge(const DatagramCounters& other);
  friend bool operator==(const DatagramCounters&, const DatagramCounters&) = default;
};

/// A write flowop's zero-copy sends (zerocopy: TCP's MSG_ZEROCOPY), and what the kernel said of
/// each once it was done with its pages (on TCP, when the bytes were acknowledged): sent from the
/// pages, or copied anyway (loopback, and a device that cannot gather, copy every send). Zero
/// elsewhere. A send whose completion has not come is `unconfirmed`: still in flight when the
/// counters were taken, or its connection closed before the kernel said.
struct ZeroCopyCounters {
  std::uint64_t sends = 0;        ///< send(2) calls with MSG_ZEROCOPY that moved bytes
  std::uint64_t zero_copied = 0;  ///< completions of sends the kernel made from the pages
  std::uint64_t copied = 0;       ///< completions of sends it copied (SO_EE_CODE_ZEROCOPY_COPIED)

  [[nodiscard]] bool any() const { return sends + zero_copied + copied != 0; }
  [[nodiscard]] std::uint64_t unconfirmed() const {
    const std::uint64_t confirmed = zero_copied + copied;
    return sends > confirmed ? sends - confirmed : 0;
  }
  void merge(const ZeroCopyCounters& other);
  friend bool operator==(const ZeroCopyCounters&, const ZeroCopyCounters&) = default;
};

/// Counters of one slot. For a transaction slot `ops` counts completed iterations.
struct SlotCounters {
  std::uint64_t ops = 0;            ///< completed operations (or transaction iterations)
  std::uint64_t bytes_read = 0;     ///< bytes received, partial operations included
  std::uint64_t bytes_written = 0;  ///< bytes sent, partial operations included
  std::uint64_t expired = 0;        ///< cut by the end of a duration transaction or a stop
  std::array<std::uint64_t, kErrorKindCount> errors{};
  DatagramCounters datagrams;
  ZeroCopyCounters zerocopy = {};
  /// A paced transaction's slot (rate=, bound by a duration): the iterations its strands'
  /// schedules asked for within the step (intended starts before its end, engine::PacedSchedule),
  /// counted as each strand enters the step. `ops` is what they did. Zero elsewhere.
  std::uint64_t scheduled = {};

  [[nodiscard]] std::uint64_t error_total() const;
  [[nodiscard]] std::uint64_t bytes() const { return bytes_read + bytes_written; }
  void merge(const SlotCounters& other);
  friend bool operator==(const SlotCounters&, const SlotCounters&) = default;
};

/// Counters plus the latency distribution of completed operations (ns).
struct SlotStats {
  SlotCounters counters;
  stats::LatencyHistogram latency;
  /// A transaction slot: its strands' TCP connections as each strand ended the transaction's
  /// step (empty for flowop slots, and without TCP connections).
  stats::TcpSummary tcp;
  /// A TLS handshake slot: what its handshakes negotiated ("TLSv1.3 TLS_AES_128_GCM_SHA256"),
  /// each distinct text once, "; " between them. Empty elsewhere.
  std::string tls;

  void merge(const SlotStats& other);
  /// Adds the texts of `negotiated` (tls's form) that `tls` does not have.
  void add_tls(const std::string& negotiated);
  void reset();
};

}  // namespace volley::results
