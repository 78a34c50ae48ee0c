#include "volley/transport/ring.hpp"

#include <sys/eventfd.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <fstream>
#include <utility>

#include <boost/asio/error.hpp>
#include <boost/asio/post.hpp>
#include <fmt/format.h>

namespace volley::transport {

namespace {

/// How many submit-and-collect passes one run() makes before it lets the worker's other handlers
/// (timers, posts) run: each pass is one io_uring_enter, and a ping-pong needs two or three (the
/// completions that woke it; the operations their handlers queued).
constexpr int kPassesPerRun = 8;

/// Linux 6.12's flag for a provided buffer ring whose buffers are consumed incrementally (a
/// receive takes what it needs of the current buffer, the next one the rest), and its completion
/// flag for a buffer the kernel goes on filling; liburing 2.3's headers predate them.
constexpr std::uint16_t kIncrementalBuffers = 2;                 // IOU_PBUF_RING_INC
constexpr std::uint32_t kBufferHasMore = std::uint32_t{1} << 4;  // IORING_CQE_F_BUF_MORE
/// The scratch buffers' group.
constexpr std::uint16_t kScratchGroup = 0;

/// The flags tried in turn: deferred task work needs a single issuer (Linux 6.1); cooperative
/// task work (5.19) at least does not interrupt the thread for each completion. With either,
/// TASKRUN_FLAG makes the kernel say in the ring when completions wait for this thread.
constexpr unsigned kSetups[] = {
    IORING_SETUP_SINGLE_ISSUER | IORING_SETUP_DEFER_TASKRUN | IORING_SETUP_TASKRUN_FLAG,
    IORING_SETUP_COOP_TASKRUN | IORING_SETUP_TASKRUN_FLAG, IORING_SETUP_COOP_TASKRUN, 0};

/// The most operations one io_uring_enter(2) submits: half the kernel's per-CPU backlog of
/// packets received (net.core.netdev_max_backlog). A send on loopback queues its packet on the
/// sending CPU's backlog, which the network softirq drains. Where that work has been left to
/// ksoftirqd (which runs beside a ping-pong of thousands of connections here: about a tenth of a
/// CPU), nothing drains the backlog while this thread issues a submission's operations inside the
/// kernel, so a submission of more sends than the backlog holds overflows it. Measured at 4,096
/// connections: 4-1,137 packets dropped in each 4 s run with submissions of up to 4,096 entries,
/// 0-47 with this bound (docs/performance.md, "volley's io_uring engine"); each dropped data
/// segment stalls its connection until TCP sends it again. Half leaves room for the packets of
/// the other end, which may run on the same CPU.
unsigned batch_for_backlog() {
  constexpr unsigned kLinuxDefault = 1000;
  std::ifstream in("/proc/sys/net/core/netdev_max_backlog");
  unsigned backlog = 0;
  if (!(in >> backlog) || backlog == 0) backlog = kLinuxDefault;
  return std::max(backlog / 2, 1U);
}

std::string why_not(int error) {
  switch (error) {
    case ENOSYS: return "this kernel has no io_uring (io_uring_setup: not implemented)";
    case EPERM:
    case EACCES:
      return "io_uring is not permitted here (kernel.io_uring_disabled, or a seccomp filter such "
             "as a container's)";
    case ENOMEM: return "io_uring could not get its memory (the locked-memory limit, ulimit -l)";
    default: return fmt::format("io_uring_setup failed: {}", std::strerror(error));
  }
}

/// Sets `ring` up with the first of kSetups the kernel takes; -errno of the last refusal.
int set_up(io_uring& ring, unsigned entries, unsigned& flags) {
  int rc = -EINVAL;
  for (const unsigned f : kSetups) {
    io_uring_params params{};
    params.flags = f;
    rc = io_uring_queue_init_params(entries, &ring, &params);
    if (rc == 0) {
      flags = f;
      return 0;
    }
    if (rc != -EINVAL) return rc;  // not a flag this kernel lacks: the same for every flag
  }
  return rc;
}

}  // namespace

boost::system::error_code ring_error(int result) {
  if (result == -ECANCELED) return boost::asio::error::operation_aborted;
  return {-result, boost::system::system_category()};
}

std::string Ring::unavailable() {
  io_uring ring{};
  unsigned flags = 0;
  const int rc = set_up(ring, 8, flags);
  if (rc < 0) return why_not(-rc);
  io_uring_queue_exit(&ring);
  return {};
}

std::variant<std::unique_ptr<Ring>, std::string> Ring::open(boost::asio::io_context& context,
                                                            unsigned entries, unsigned file_slots,
                                                            bool scratch) {
  const int events = ::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
  if (events < 0) return fmt::format("io_uring: eventfd: {}", std::strerror(errno));
  std::unique_ptr<Ring> ring(new Ring(context, events));
  unsigned flags = 0;
  if (const int rc = set_up(ring->ring_, entries, flags); rc < 0) {
    ring->ring_.ring_fd = -1;  // nothing to tear down
    return why_not(-rc);
  }
  ring->defer_taskrun_ = (flags & IORING_SETUP_DEFER_TASKRUN) != 0;
  if (const int rc = io_uring_register_eventfd(&ring->ring_, events); rc < 0) {
    return fmt::format("io_uring: registering its eventfd: {}", std::strerror(-rc));
  }
  ring->register_files(file_slots);
  if (scratch) ring->register_scratch();
  ring->batch_ = std::min(batch_for_backlog(), ring->ring_.sq.ring_entries);
  return ring;
}

void Ring::register_files(unsigned most) {
  // One slot per descriptor the process may open (the kernel refuses a table larger than
  // RLIMIT_NOFILE), within a bound on the kernel memory a ring's table takes. Without a table the
  // ring works as well, naming descriptors.
  rlimit files{};
  if (::getrlimit(RLIMIT_NOFILE, &files) != 0) return;
  const auto slots = static_cast<unsigned>(std::min<rlim_t>(files.rlim_cur, most));
  if (slots == 0 || io_uring_register_files_sparse(&ring_, slots) < 0) return;
  file_slots_ = slots;
  free_files_.reserve(slots);
  for (unsigned slot = slots; slot-- > 0;) free_files_.push_back(static_cast<int>(slot));
}

void Ring::register_scratch() {
  // The ring of buffer descriptions must be page-aligned; the memory is mapped so that pages the
  // kernel never fills take none.
  const std::size_t ring_bytes = kScratchBuffers * sizeof(io_uring_buf);
  void* ring =
      ::mmap(nullptr, ring_bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (ring == MAP_FAILED) return;
  const std::size_t memory_bytes = std::size_t{kScratchBuffers} * kScratchBytes;
  void* memory =
      ::mmap(nullptr, memory_bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (memory == MAP_FAILED) {
    ::munmap(ring, ring_bytes);
    return;
  }
  io_uring_buf_reg reg{};
  reg.ring_addr = reinterpret_cast<std::uintptr_t>(ring);
  reg.ring_entries = kScratchBuffers;
  reg.bgid = kScratchGroup;
  reg.pad = kIncrementalBuffers;  // (the field's name before Linux 6.12 gave it flags)
  // Without incremental consumption every receive would take a whole buffer, and a few buffers
  // could not serve thousands of connections: the connections then receive one operation at a
  // time, as they do without scratch buffers.
  if (io_uring_register_buf_ring(&ring_, &reg, 0) != 0) {
    ::munmap(memory, memory_bytes);
    ::munmap(ring, ring_bytes);
    return;
  }
  scratch_.ring = static_cast<io_uring_buf_ring*>(ring);
  scratch_.memory = static_cast<char*>(memory);
  io_uring_buf_ring_init(scratch_.ring);
  const int mask = io_uring_buf_ring_mask(kScratchBuffers);
  for (unsigned id = 0; id < kScratchBuffers; ++id) {
    io_uring_buf_ring_add(scratch_.ring, scratch_.memory + std::size_t{id} * kScratchBytes,
                          kScratchBytes, static_cast<unsigned short>(id), mask,
                          static_cast<int>(id));
  }
  io_uring_buf_ring_advance(scratch_.ring, kScratchBuffers);
}

void Ring::prep_counted_recv(io_uring_sqe* sqe, File file) const {
  io_uring_prep_recv_multishot(sqe, file.fd, nullptr, 0, 0);
  file.target(sqe);
  sqe->flags |= IOSQE_BUFFER_SELECT;
  sqe->buf_group = kScratchGroup;
}

void Ring::recycle(std::uint32_t flags) {
  if ((flags & IORING_CQE_F_BUFFER) == 0 || (flags & kBufferHasMore) != 0) return;
  const unsigned id = flags >> IORING_CQE_BUFFER_SHIFT;
  io_uring_buf_ring_add(scratch_.ring, scratch_.memory + std::size_t{id} * kScratchBytes,
                        kScratchBytes, static_cast<unsigned short>(id),
                        io_uring_buf_ring_mask(kScratchBuffers), 0);
  io_uring_buf_ring_advance(scratch_.ring, 1);
}

Ring::File Ring::register_file(int fd) {
  if (free_files_.empty() || shut_) return {fd, -1};
  const int slot = free_files_.back();
  if (io_uring_register_files_update(&ring_, static_cast<unsigned>(slot), &fd, 1) < 1) {
    return {fd, -1};
  }
  free_files_.pop_back();
  return {fd, slot};
}

Ring::Ring(boost::asio::io_context& context, int eventfd)
    : context_(context), events_(context, eventfd) {
  ring_.ring_fd = -1;
}

Ring::~Ring() { shutdown(); }

void Ring::shutdown() {
  if (shut_ || ring_.ring_fd < 0) return;
  shut_ = true;
  watching_ = false;
  boost::system::error_code ignored;
  events_.cancel(ignored);
  // Cancel what is in flight and collect the cancellations, so that no operation writes into
  // memory after its owner is gone; then drop the handlers of any that did not come back.
  if (in_flight_ > 0) {
    if (io_uring_sqe* sqe = io_uring_get_sqe(&ring_); sqe != nullptr) {
      io_uring_prep_cancel64(sqe, 0, IORING_ASYNC_CANCEL_ANY);
      io_uring_sqe_set_data64(sqe, 0);
    }
    const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(1);
    while (in_flight_ > 0 && std::chrono::steady_clock::now() < give_up) {
      __kernel_timespec wait{0, 50'000'000};
      io_uring_cqe* cqe = nullptr;
      const int rc = io_uring_submit_and_wait_timeout(&ring_, &cqe, 1, &wait, nullptr);
      if (rc < 0 && rc != -ETIME && rc != -EINTR) break;  // another thread: the kernel cancels
      while (io_uring_peek_cqe(&ring_, &cqe) == 0) {
        auto* op = reinterpret_cast<Op*>(io_uring_cqe_get_data(cqe));
        const bool more = (cqe->flags & IORING_CQE_F_MORE) != 0;
        io_uring_cqe_seen(&ring_, cqe);
        if (op == nullptr || more) continue;  // (a multishot operation ends with its last)
        unlink(*op);
        op->drop();
      }
    }
  } else {
    io_uring_submit(&ring_);  // closes still queued
  }
  for (std::size_t i = 0; i < slots_.size(); ++i) {  // (by index: a drop may start another)
    if (Op* op = slots_[i]) {
      unlink(*op);
      op->drop();
    }
  }
  io_uring_queue_exit(&ring_);
  if (scratch_.ring != nullptr) {
    ::munmap(scratch_.memory, std::size_t{kScratchBuffers} * kScratchBytes);
    ::munmap(scratch_.ring, kScratchBuffers * sizeof(io_uring_buf));
    scratch_ = {};
  }
}

void Ring::watch() {
  // The eventfd is in Asio's epoll set: a completion that comes while run() works signals it
  // again, which wakes the wait queued after it. The wait is queued only while operations are in
  // flight: a pending wait is work that keeps the worker's loop running. Each wake-up reads the
  // eventfd's count back to zero: left set, it woke the loop again at once, over and over (on
  // this kernel a worker then spun through hundreds of thousands of empty wake-ups a second and
  // starved the peer it waited for).
  watching_ = true;
  events_.async_wait(boost::asio::posix::stream_descriptor::wait_read,
                     [this](const boost::system::error_code& ec) {
                       if (ec) return;  // cancelled by settle(): watching_ is already false
                       watching_ = false;
                       std::uint64_t count = 0;
                       [[maybe_unused]] const ssize_t n =
                           ::read(events_.native_handle(), &count, sizeof count);
                       run();
                     });
}

void Ring::settle() {
  const bool awaited = in_flight_ > unawaited_;
  if (awaited && !watching_) {
    watch();
  } else if (!awaited && watching_) {
    watching_ = false;
    boost::system::error_code ignored;
    events_.cancel(ignored);
  }
}

void Ring::run_soon() {
  if (run_posted_) return;
  run_posted_ = true;
  boost::asio::post(context_, [this] {
    run_posted_ = false;
    run();
  });
}

void Ring::run() {
  running_ = true;
  // No eventfd signal while this thread collects completions itself: each enter that posts some
  // would otherwise signal it, and wake the loop once more for nothing.
  io_uring_cq_eventfd_toggle(&ring_, false);
  for (int pass = 0; pass < kPassesPerRun; ++pass) {
    // With deferred task work a completion is finished only inside io_uring_enter: the first
    // pass enters even with nothing to submit, as does any pass the kernel flags.
    const bool flagged = (IO_URING_READ_ONCE(*ring_.sq.kflags) & IORING_SQ_TASKRUN) != 0;
    if ((pass == 0 && defer_taskrun_) || flagged) {
      io_uring_submit_and_get_events(&ring_);
    } else if (io_uring_sq_ready(&ring_) > 0) {
      io_uring_submit(&ring_);
    }
    if (complete_ready() == 0 && io_uring_sq_ready(&ring_) == 0) break;
  }
  running_ = false;
  io_uring_cq_eventfd_toggle(&ring_, true);
  // What completed between the last pass and the signal's return (the kernel's flag says so; the
  // fence orders this read after the store above, as the kernel's side is ordered) and what the
  // passes left: after the worker's other handlers.
  std::atomic_thread_fence(std::memory_order_seq_cst);
  const bool waiting = (IO_URING_READ_ONCE(*ring_.sq.kflags) & IORING_SQ_TASKRUN) != 0 ||
                       io_uring_cq_ready(&ring_) > 0;
  if (io_uring_sq_ready(&ring_) > 0 || waiting) run_soon();
  settle();
}

unsigned Ring::complete_ready() {
  unsigned n = 0;
  io_uring_cqe* cqe = nullptr;
  while (io_uring_peek_cqe(&ring_, &cqe) == 0) {
    auto* op = reinterpret_cast<Op*>(io_uring_cqe_get_data(cqe));
    const int result = cqe->res;
    const std::uint32_t flags = cqe->flags;
    io_uring_cqe_seen(&ring_, cqe);
    ++n;
    // A scratch buffer's bytes are never read: it goes back before anything else runs.
    if ((flags & IORING_CQE_F_BUFFER) != 0) recycle(flags);
    if (op == nullptr) continue;  // an unwatched entry's
    if ((flags & IORING_CQE_F_MORE) != 0) {
      op->progress(result);
      continue;
    }
    unlink(*op);
    op->complete(result);
  }
  return n;
}

io_uring_sqe* Ring::next_sqe(unsigned together) {
  // Full, or a whole batch queued: submitted now, the new entries with the next submission.
  if (io_uring_sq_space_left(&ring_) < together || io_uring_sq_ready(&ring_) >= batch_) {
    io_uring_submit(&ring_);
  }
  if (!running_) run_soon();  // (inside run(), its next pass submits it)
  return io_uring_get_sqe(&ring_);
}

void Ring::link(Op& op) {
  if (free_.empty()) {
    op.slot_ = static_cast<std::uint32_t>(slots_.size());
    slots_.push_back(&op);
  } else {
    op.slot_ = free_.back();
    free_.pop_back();
    slots_[op.slot_] = &op;
  }
  ++in_flight_;
}

void Ring::awaited(Op& op, bool yes) {
  if (op.unawaited_ == !yes) return;
  op.unawaited_ = !yes;
  if (yes) {
    --unawaited_;
  } else {
    ++unawaited_;
  }
  if (!running_) settle();  // (inside run(), its end settles)
}

void Ring::unlink(Op& op) {
  if (op.unawaited_) {
    op.unawaited_ = false;
    --unawaited_;
  }
  slots_[op.slot_] = nullptr;
  free_.push_back(op.slot_);
  --in_flight_;
}

void Ring::prep_cancel(File file) {
  io_uring_sqe* cancel = next_sqe(1);
  if (file.slot >= 0) {
    io_uring_prep_cancel_fd(cancel, file.slot,
                            IORING_ASYNC_CANCEL_ALL | IORING_ASYNC_CANCEL_FD_FIXED);
  } else {
    io_uring_prep_cancel_fd(cancel, file.fd, IORING_ASYNC_CANCEL_ALL);
  }
  io_uring_sqe_set_data64(cancel, 0);
}

void Ring::cancel_descriptor(File file) {
  if (!shut_) prep_cancel(file);
}

void Ring::close_descriptor(File file) {
  // The cancel is submitted before the close, so that it finds the descriptor's operations by its
  // number (or slot) before another socket can get that number. A close linked after it in the
  // ring would save the submission, but with deferred task work it runs only at a later
  // io_uring_enter that collects completions, and a ring shut down before that never closes the
  // socket. The slot is emptied before the close: the table holds a reference to the socket, which
  // would keep it open (no FIN) after close(2).
  if (!shut_) {
    prep_cancel(file);
    io_uring_submit(&ring_);
    if (file.slot >= 0) {
      int none = -1;
      if (io_uring_register_files_update(&ring_, static_cast<unsigned>(file.slot), &none, 1) == 1) {
        free_files_.push_back(file.slot);
      }  // (else the slot stays taken until the ring goes, with the socket it holds)
    }
  }
  ::close(file.fd);
}

}  // namespace volley::transport
