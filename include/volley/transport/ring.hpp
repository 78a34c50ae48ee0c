#pragma once
// One io_uring instance (io_uring(7)) of a worker: the second way a worker waits, beside Asio's
// epoll reactor. Operations are queued as submission entries and submitted together: one
// io_uring_enter(2) per pass of the worker's event loop carries the operations its strands queued
// in that pass, and collects every completion that came meanwhile. A submission carries at most
// half the kernel's per-CPU backlog of received packets (net.core.netdev_max_backlog): more are
// submitted as they are queued, in batches of that many (a larger one, of sends on loopback,
// overflowed that backlog).
//
// The worker's loop stays Asio's: the ring's registered eventfd is one descriptor in its epoll
// set, so timers, posts from other threads and the listeners work as before, and a completion
// wakes the loop as a socket would. The ring is set up for one issuer with deferred task work
// (IORING_SETUP_SINGLE_ISSUER | IORING_SETUP_DEFER_TASKRUN) where the kernel has them: the kernel
// then finishes completions only when this thread asks (io_uring_enter with GETEVENTS), in a
// batch, instead of interrupting it for each one.
//
// A ring may also hold scratch buffers (a provided buffer ring, IORING_REGISTER_PBUF_RING, with
// incremental consumption): the kernel picks from them for multishot receives whose bytes are
// counted and never looked at, as a load generator's are. Each buffer goes back to the kernel as
// soon as a completion says the kernel is done with it, so a few serve every connection.
//
// Thread: created on the worker's thread, which alone uses it (SINGLE_ISSUER); unavailable() and
// the destructor from any thread once that one is gone.
#include <liburing.h>

#include <cstdint>
#include <memory>
#include <string>
#include <variant>
#include <vector>

#include <boost/asio/io_context.hpp>
#include <boost/asio/posix/stream_descriptor.hpp>
#include <boost/system/error_code.hpp>

namespace volley::transport {

class Ring {
 public:
  /// An operation in the ring. complete() is called exactly once, with the completion's result
  /// (the system call's return value, or -errno; -ECANCELED after a cancel), on the ring's
  /// thread; drop() instead when the ring goes away first. Either ends the operation (most delete
  /// it). A multishot operation gets progress() for each completion before its last, which the
  /// kernel flags as having more to come (IORING_CQE_F_MORE).
  class Op {
   public:
    Op() = default;
    Op(const Op&) = delete;
    Op& operator=(const Op&) = delete;
    virtual void complete(int result) = 0;
    virtual void progress(int /*result*/) {}
    virtual void drop() = 0;

   protected:
    virtual ~Op() = default;

   private:
    friend class Ring;
    std::uint32_t slot_ = 0;  // its place in the ring's table of operations in flight
    bool unawaited_ = false;  // see Ring::awaited
  };

  /// Why no ring can be set up on this machine (io_uring compiled out, disabled by
  /// kernel.io_uring_disabled, refused by a seccomp filter, over the locked-memory limit): one
  /// sentence; empty when one can. Sets a ring up and tears it down.
  static std::string unavailable();
  /// The most slots a ring's table of registered files has (8 bytes of kernel memory each).
  static constexpr unsigned kMaxFileSlots = 65536;
  /// The scratch buffers: how many, and the bytes of each (a receive takes at most what is left
  /// of one, so this bounds what one completion counts).
  static constexpr unsigned kScratchBuffers = 16;
  static constexpr unsigned kScratchBytes = 64 * 1024;
  /// A ring of `entries` submission entries, on the calling thread, watched by `context` (whose
  /// thread must be the calling one), with a table of at most `file_slots` registered files (no
  /// more than RLIMIT_NOFILE, which the kernel requires); or why not (one sentence).
  /// With `scratch`, scratch buffers where the kernel consumes provided buffers incrementally
  /// (Linux 6.12); without them (or `scratch` false) has_scratch() is false.
  static std::variant<std::unique_ptr<Ring>, std::string> open(boost::asio::io_context& context,
                                                               unsigned entries = 4096,
                                                               unsigned file_slots = kMaxFileSlots,
                                                               bool scratch = true);
  ~Ring();
  Ring(const Ring&) = delete;
  Ring& operator=(const Ring&) = delete;

  /// Queues one operation: `prepare(sqe)` fills a submission entry, whose user data becomes `op`
  /// (in flight from now on). It is submitted before the worker's loop waits again.
  template <class Prepare>
  void start(Op& op, Prepare&& prepare) {
    io_uring_sqe* sqe = next_sqe(1);
    prepare(sqe);
    io_uring_sqe_set_data(sqe, &op);
    link(op);
  }
  /// A descriptor as the ring's operations name it: its slot in the ring's table of registered
  /// files when it has one (the operation then carries IOSQE_FIXED_FILE, and the kernel skips the
  /// lookup of the descriptor and the reference count on its file at every operation), else the
  /// descriptor itself.
  struct File {
    int fd = -1;
    int slot = -1;  ///< in the table of registered files; -1: none
    /// Points `sqe` (filled in with the descriptor) at the slot instead, when there is one.
    void target(io_uring_sqe* sqe) const {
      if (slot >= 0) {
        sqe->fd = slot;
        sqe->flags |= IOSQE_FIXED_FILE;
      }
    }
  };
  /// `fd` in a free slot of the table of registered files; without a slot when the table is full
  /// or the kernel refused it (its operations then name the descriptor: slower, not different).
  File register_file(int fd);
  /// Closes `file`: its operations in flight are cancelled first (they complete with -ECANCELED
  /// when the ring next runs), submitted at once, then its slot is emptied and the descriptor is
  /// closed. After shutdown() (or on another thread than the ring's, where the kernel refuses the
  /// submission and tears the operations and the table down with the ring), only the close.
  void close_descriptor(File file);
  /// Cancels `file`'s operations in flight (they complete with -ECANCELED).
  void cancel_descriptor(File file);
  /// Whether the ring has scratch buffers (above), so that prep_counted_recv() may be used.
  [[nodiscard]] bool has_scratch() const { return scratch_.memory != nullptr; }
  /// Fills `sqe` with a multishot receive on `file` into the scratch buffers: completions with
  /// the bytes received (each a count only: the buffer is already back), until the end of the
  /// stream (0), an error, a cancel, or a final completion with more to receive (the kernel ends
  /// a multishot receive when the scratch buffers run out, for one).
  void prep_counted_recv(io_uring_sqe* sqe, File file) const;
  /// Whether anything waits for `op` (in flight): an operation nothing waits for, such as a
  /// standing receive no read waits on, is no work that keeps the worker's loop running (the
  /// loop then ends when its other work does, as a worker's does at the end of a run). Started
  /// operations are awaited.
  void awaited(Op& op, bool yes);
  /// Slots of the table of registered files in use.
  [[nodiscard]] std::size_t registered_files() const { return file_slots_ - free_files_.size(); }
  /// Submits what is queued and handles the completions that are there (several passes, while
  /// each finds some: a completion's handler often queues the next operation, and a send or a
  /// receive of data already there completes during the submission itself).
  void run();
  /// Cancels what is in flight, waits (a bounded time) for the cancellations and drops every
  /// operation still in flight; on the ring's thread. The destructor does it if nobody did.
  void shutdown();
  /// Whether the ring defers completions' task work to this thread (IORING_SETUP_DEFER_TASKRUN).
  [[nodiscard]] bool defers_task_work() const { return defer_taskrun_; }
  /// The io_context that watches the ring (whose thread is the ring's).
  [[nodiscard]] boost::asio::io_context& context() { return context_; }
  /// Operations in flight.
  [[nodiscard]] std::size_t in_flight() const { return in_flight_; }
  /// The most operations one submission carries (see above).
  [[nodiscard]] unsigned submission_batch() const { return batch_; }

 private:
  Ring(boost::asio::io_context& context, int eventfd);
  io_uring_sqe* next_sqe(unsigned together);
  void watch();
  /// After run(): the eventfd watched while operations are in flight, and only then.
  void settle();
  void run_soon();
  /// Hands the completions that are there to their operations; how many there were.
  unsigned complete_ready();
  void link(Op& op);
  void unlink(Op& op);
  void register_files(unsigned most);
  void register_scratch();
  /// A buffer the kernel is done with (`flags`: a completion's) back to the scratch ring.
  void recycle(std::uint32_t flags);
  void prep_cancel(File file);

  io_uring ring_{};
  /// The operations in flight, for drop() at the end: a dense table (an operation knows its slot)
  /// rather than a list through the operations, so that starting or completing one touches no
  /// other operation's memory (at thousands of connections each would be a cache miss).
  std::vector<Op*> slots_;
  std::vector<std::uint32_t> free_;  ///< slots not in use
  /// The table of registered files (io_uring_register_files_sparse): its size (0 when the kernel
  /// has none) and its free slots, the lowest last.
  std::size_t file_slots_ = 0;
  std::vector<int> free_files_;
  /// The scratch buffers: their ring (shared with the kernel) and their memory, both mapped.
  struct Scratch {
    io_uring_buf_ring* ring = nullptr;
    char* memory = nullptr;
  };
  Scratch scratch_;
  /// The most entries one submission carries (batch_for_backlog() in ring.cpp).
  unsigned batch_ = 4096;
  bool defer_taskrun_ = false;
  bool run_posted_ = false;
  bool running_ = false;
  bool watching_ = false;
  // inside run(): what is queued now is submitted by its next pass
  bool shut_ = false;  // shutdown() ran: descriptors close at once
  std::size_t in_flight_ = 0;
  std::size_t unawaited_ = 0;  ///< of those in flight
  boost::asio::io_context& context_;
  boost::asio::posix::stream_descriptor events_;  // the registered eventfd
};

/// The error a completion's negative result stands for (-ECANCELED: operation_aborted, as an
/// Asio operation cancelled or closed under it ends).
boost::system::error_code ring_error(int result);

}  // namespace volley::transport
