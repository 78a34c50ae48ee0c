#pragma once
// Zero-copy sends on one TCP socket (MSG_ZEROCOPY; the kernel's
// Documentation/networking/msg_zerocopy.rst) and their completions. The kernel sends such a send's
// bytes from the caller's pages and, once it is done with them (on TCP, when they are
// acknowledged), queues a completion on the socket's error queue: a range of sends, numbered from
// 0 in the order they were made, with a flag when it copied them anyway (loopback and devices
// that cannot gather copy every send). The caller must leave the bytes of a send unchanged until
// its completion has come. Each send is made for a tag (the caller's: a stat slot), and what the
// completions said is handed back per tag. Unread completions hold socket memory (optmem): past
// net.core.optmem_max a send fails with ENOBUFS until they are read. Thread: the socket's.
#include <cstdint>
#include <span>
#include <vector>

#include <boost/system/error_code.hpp>

#include "volley/transport/io_result.hpp"

namespace volley::transport {

/// What one completion said, or a run of them: the sends of one tag it covered, sent from the
/// caller's pages or copied by the kernel all the same.
struct ZeroCopyCompleted {
  std::uint32_t tag = 0;
  std::uint64_t zero_copied = 0;
  std::uint64_t copied = 0;
};

/// The bookkeeping of ZeroCopySends, apart from the socket: which tag each numbered send was made
/// for, and which sends have had their completion. Completions may come in any order and cover
/// sends of several tags; numbers wrap at 2^32.
class ZeroCopyLedger {
 public:
  /// `first`: the number of the first send (the kernel's are from 0; a test may start elsewhere).
  explicit ZeroCopyLedger(std::uint32_t first = 0) : next_(first) {}
  /// A send was made for `tag`: it is numbered next.
  void sent(std::uint32_t tag);
  /// A completion of sends [first, last] (inclusive, modulo 2^32): adds to `out` an entry per
  /// tag it covered. Numbers before the oldest run still owed, or not sent yet, are left out (the
  /// kernel reports each send once, so no other check is needed).
  void settle(std::uint32_t first, std::uint32_t last, bool copied,
              std::vector<ZeroCopyCompleted>& out);
  /// Sends made whose completion has not come.
  [[nodiscard]] std::uint64_t owed() const { return sends_ - settled_; }
  [[nodiscard]] std::uint64_t sends() const { return sends_; }

 private:
  /// Sends from number `first` on were made for `tag`, up to the next run's first (or the next
  /// send's number, for the last run); `settled` of them have had their completion.
  struct Run {
    std::uint32_t first = 0;
    std::uint32_t tag = 0;
    std::uint64_t settled = 0;
  };
  std::vector<Run> runs_;   ///< oldest first
  std::uint32_t next_ = 0;  ///< the number of the next send
  std::uint64_t sends_ = 0;
  std::uint64_t settled_ = 0;
};

class ZeroCopySends {
 public:
  using Completed = ZeroCopyCompleted;

  /// SO_ZEROCOPY on `fd`: the kernel ignores MSG_ZEROCOPY on a socket without it.
  static boost::system::error_code enable(int fd);

  /// One non-blocking send(2) of `from` with MSG_ZEROCOPY; one that moved bytes is owed a
  /// completion, counted for `tag`. EINTR is tried again; EAGAIN is would_block(); ENOBUFS
  /// (no_buffers()): too many completions are unread, read them (collect) and send again.
  IoResult send(int fd, std::span<const char> from, std::uint32_t tag);

  /// Reads the completions queued on `fd` now, without waiting, and calls `counted(Completed)`
  /// once per tag per completion read. Returns how many sends they covered.
  template <class F>
  std::uint64_t collect(int fd, F&& counted) {
    unread_sends_ = 0;
    std::uint64_t covered = 0;
    Range range;
    while (ledger_.owed() > 0 && read_one(fd, range)) {
      parts_.clear();
      ledger_.settle(range.first, range.last, range.copied, parts_);
      for (const Completed& part : parts_) {
        covered += part.zero_copied + part.copied;
        counted(part);
      }
    }
    return covered;
  }

  /// Sends made whose completion has not been read.
  [[nodiscard]] std::uint64_t owed() const { return ledger_.owed(); }
  /// Sends made since the last collect().
  [[nodiscard]] std::uint64_t unread_sends() const { return unread_sends_; }
  /// Whether `io` failed because too many completions are unread (ENOBUFS).
  static bool no_buffers(const IoResult& io);

 private:
  /// One completion: sends [first, last], copied or not.
  struct Range {
    std::uint32_t first = 0;
    std::uint32_t last = 0;
    bool copied = false;
  };
  /// Reads one zero-copy completion from the error queue; false when none is queued (or the read
  /// failed: what is unread then stays owed).
  static bool read_one(int fd, Range& range);

  ZeroCopyLedger ledger_;
  std::uint64_t unread_sends_ = 0;
  std::vector<Completed> parts_;  ///< collect()'s, kept to spare an allocation per completion
};

}  // namespace volley::transport
