/* stream_uring: one-way bulk transfer over loopback with io_uring, stream_ref's twin (same options,
 * same output, one option more).
 *
 * N streams; each has a sender thread that sends -s byte blocks (or sends -f FILE from the start,
 * over and over, -s bytes at a time) and a receiver thread that receives them. Prints
 * gbit_per_sec= (bytes received while measuring) and us_cpu_per_kb= (CPU of both ends per KiB).
 * With -p the senders run in a child process (two processes, as stream_ref -p); without it both
 * ends share one process.
 *
 * Every thread has its own ring, set up for one issuer with deferred task work
 * (IORING_SETUP_SINGLE_ISSUER | IORING_SETUP_DEFER_TASKRUN, where the kernel has them): completions
 * are processed only when the thread waits.
 * - The sender keeps one send of -s bytes in flight (MSG_WAITALL), as a blocking write does: it
 *   queues it, waits for its completion, queues the next. -z sends with IORING_OP_SEND_ZC instead
 *   (zero-copy, with a notification per send saying whether the kernel copied anyway) and prints
 *   zc_sends= and zc_copied=. -f: two linked splices per block, the file into a pipe and the pipe
 *   into the socket (io_uring has no sendfile; sendfile(2) is the same two splices through a pipe
 *   of the kernel's own).
 * - The receiver arms one multishot receive into a ring of 64 provided buffers of -s bytes (the
 *   size stream_ref reads): each completion is one buffer's worth of what arrived, handed back to
 *   the ring at once; the receive is armed again when the kernel ends it (no buffer left).
 *
 *   stream_uring -n 1 -s 65536 -d 5 -w 1 [-f FILE] [-p] [-z]
 * Build: cc -O2 -Wall -Wextra -std=gnu11 -I ../shared/bench/ref stream_uring.c -lpthread -luring
 */
#include "pp_common.h"
#include <fcntl.h>
#include <liburing.h>
#include <pthread.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>

#ifndef IORING_SEND_ZC_REPORT_USAGE /* Linux 6.2; liburing 2.3's header predates it */
#define IORING_SEND_ZC_REPORT_USAGE (1U << 3)
#define IORING_NOTIF_USAGE_ZC_COPIED (1U << 31)
#endif

#define NBUFS 64 /* the receiver's provided buffers, a power of two */
#define BGID 1

static int g_port, g_size = 65536, g_zc;
static const char* g_file;
static volatile int g_stop, g_measuring;
static _Atomic unsigned long long g_bytes, g_zc_sends, g_zc_copied;

static void ring_init(struct io_uring* ring) {
  struct io_uring_params p = {.flags = IORING_SETUP_SINGLE_ISSUER | IORING_SETUP_DEFER_TASKRUN};
  if (io_uring_queue_init_params(8, ring, &p) < 0) {
    memset(&p, 0, sizeof(p)); /* an older kernel: a plain ring */
    int e = io_uring_queue_init_params(8, ring, &p);
    if (e < 0) {
      errno = -e;
      DIE("io_uring_queue_init");
    }
  }
}

/* Submits what is queued and returns the next completion (the caller marks it seen). */
static struct io_uring_cqe* next_cqe(struct io_uring* ring) {
  struct io_uring_cqe* cqe;
  int e;
  do e = io_uring_submit_and_wait(ring, 1);
  while (e == -EINTR);
  if (e < 0 || io_uring_peek_cqe(ring, &cqe)) {
    errno = e < 0 ? -e : EAGAIN;
    DIE("io_uring wait");
  }
  return cqe;
}

/* One block of -s bytes: its send's result (the bytes, or -errno). With -z, the notification of
 * each send is counted as it comes; a later send need not wait for it, since nothing writes the
 * buffer. */
static int send_block(struct io_uring* ring, int fd, const char* buf) {
  struct io_uring_sqe* sqe = io_uring_get_sqe(ring);
  if (g_zc) {
    io_uring_prep_send_zc(sqe, fd, buf, (size_t)g_size, MSG_WAITALL, IORING_SEND_ZC_REPORT_USAGE);
  } else {
    io_uring_prep_send(sqe, fd, buf, (size_t)g_size, MSG_WAITALL);
  }
  for (;;) {
    struct io_uring_cqe* cqe = next_cqe(ring);
    int res = cqe->res;
    unsigned flags = cqe->flags;
    io_uring_cqe_seen(ring, cqe);
    if (flags & IORING_CQE_F_NOTIF) {
      g_zc_sends++;
      if ((unsigned)res & IORING_NOTIF_USAGE_ZC_COPIED) g_zc_copied++;
      continue;
    }
    return res;
  }
}

/* One block of the file from *off into the socket through the pipe: the bytes, or <= 0. */
static int splice_block(struct io_uring* ring, int file, off_t* off, off_t file_size,
                        int pipe_fds[2], int fd) {
  unsigned n = (unsigned)(file_size - *off < g_size ? file_size - *off : g_size);
  struct io_uring_sqe* in = io_uring_get_sqe(ring);
  io_uring_prep_splice(in, file, *off, pipe_fds[1], -1, n, 0);
  in->flags |= IOSQE_IO_LINK;
  io_uring_prep_splice(io_uring_get_sqe(ring), pipe_fds[0], -1, fd, -1, n, SPLICE_F_MOVE);
  int res = 0;
  for (int i = 0; i < 2; i++) { /* the second's result is what reached the socket */
    struct io_uring_cqe* cqe = next_cqe(ring);
    res = cqe->res;
    io_uring_cqe_seen(ring, cqe);
    if (res <= 0) return res;
  }
  *off += res;
  return res;
}

static void* sender(void* arg) {
  (void)arg;
  int fd = connect_lo(g_port), file = -1, pipe_fds[2];
  off_t file_size = 0;
  if (g_file) {
    struct stat st;
    file = open(g_file, O_RDONLY);
    if (file < 0 || fstat(file, &st)) DIE("open %s", g_file);
    file_size = st.st_size;
    if (pipe(pipe_fds) || fcntl(pipe_fds[1], F_SETPIPE_SZ, g_size) < g_size)
      DIE("pipe of %d bytes", g_size);
  }
  struct io_uring ring;
  ring_init(&ring);
  char* buf = calloc(1, (size_t)g_size);
  while (!g_stop) {
    if (file >= 0) {
      off_t off = 0;
      while (!g_stop && off < file_size)
        if (splice_block(&ring, file, &off, file_size, pipe_fds, fd) <= 0) {
          g_stop = 1;
          break;
        }
    } else if (send_block(&ring, fd, buf) <= 0) {
      break;
    }
  }
  io_uring_queue_exit(&ring);
  shutdown(fd, SHUT_WR);
  close(fd);
  return NULL;
}

static void arm_receive(struct io_uring* ring, int fd) {
  struct io_uring_sqe* sqe = io_uring_get_sqe(ring);
  io_uring_prep_recv_multishot(sqe, fd, NULL, 0, 0);
  sqe->flags |= IOSQE_BUFFER_SELECT;
  sqe->buf_group = BGID;
}

static void* receiver(void* arg) {
  int fd = (int)(long)arg, mask = io_uring_buf_ring_mask(NBUFS);
  struct io_uring ring;
  ring_init(&ring);
  /* The buffer ring: page-aligned memory the kernel takes buffers from and this thread refills. */
  struct io_uring_buf_ring* br = mmap(NULL, NBUFS * sizeof(struct io_uring_buf),
                                      PROT_READ | PROT_WRITE, MAP_ANONYMOUS | MAP_PRIVATE, -1, 0);
  if (br == MAP_FAILED) DIE("mmap");
  struct io_uring_buf_reg reg = {
      .ring_addr = (unsigned long)br, .ring_entries = NBUFS, .bgid = BGID};
  int e = io_uring_register_buf_ring(&ring, &reg, 0);
  if (e) {
    errno = -e;
    DIE("io_uring_register_buf_ring");
  }
  char* bufs = malloc((size_t)NBUFS * (size_t)g_size);
  io_uring_buf_ring_init(br);
  for (int i = 0; i < NBUFS; i++)
    io_uring_buf_ring_add(br, bufs + (size_t)i * g_size, (unsigned)g_size, (unsigned short)i, mask,
                          i);
  io_uring_buf_ring_advance(br, NBUFS);
  arm_receive(&ring, fd);
  for (int done = 0; !done;) {
    io_uring_submit_and_wait(&ring, 1);
    struct io_uring_cqe* cqe;
    unsigned head, seen = 0;
    int returned = 0;
    io_uring_for_each_cqe(&ring, head, cqe) {
      seen++;
      if (cqe->res > 0) {
        if (g_measuring) g_bytes += (unsigned long long)cqe->res;
        unsigned short bid = (unsigned short)(cqe->flags >> IORING_CQE_BUFFER_SHIFT);
        io_uring_buf_ring_add(br, bufs + (size_t)bid * g_size, (unsigned)g_size, bid, mask,
                              returned++);
      } else if (cqe->res != -ENOBUFS) {
        done = 1; /* the end of the stream (0), or the connection failed */
      }
      if (!(cqe->flags & IORING_CQE_F_MORE) && !done) arm_receive(&ring, fd);
    }
    io_uring_buf_ring_advance(br, returned);
    io_uring_cq_advance(&ring, seen);
  }
  io_uring_queue_exit(&ring);
  close(fd);
  return NULL;
}

/* user + system CPU seconds of another process, from /proc/PID/stat */
static double proc_cpu_s(pid_t pid) {
  char path[64], buf[1024];
  snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
  FILE* f = fopen(path, "r");
  if (!f) return 0;
  size_t len = fread(buf, 1, sizeof(buf) - 1, f);
  fclose(f);
  buf[len] = 0;
  char* p = strrchr(buf, ')');
  unsigned long long ut = 0, st = 0;
  if (!p || sscanf(p + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %llu %llu", &ut, &st) != 2)
    return 0;
  return (double)(ut + st) / (double)sysconf(_SC_CLK_TCK);
}

int main(int argc, char** argv) {
  double dur = 5, warm = 1;
  int n = 1, opt, two = 0;
  while ((opt = getopt(argc, argv, "n:s:d:w:f:pz")) != -1) {
    switch (opt) {
      case 'n': n = atoi(optarg); break;
      case 's': g_size = atoi(optarg); break;
      case 'd': dur = atof(optarg); break;
      case 'w': warm = atof(optarg); break;
      case 'f': g_file = optarg; break;
      case 'p': two = 1; break;
      case 'z': g_zc = 1; break;
      default:
        fprintf(stderr,
                "usage: %s [-n streams] [-s size] [-d secs] [-w warmup] [-f file] [-p] [-z]\n",
                argv[0]);
        return 2;
    }
  }
  if (n < 1 || n > 64 || g_size < 1) DIE("bad -n or -s");
  if (g_zc && two) DIE("-z counts the sender's notifications in this process: not with -p");
  if (g_zc && g_file) DIE("-z sends from memory: not with -f");
  int lfd = make_listener(&g_port, 64);
  pthread_t snd[64], rcv[64];
  pid_t child = -1;
  if (two) {
    /* the child sends on n streams until the parent, done measuring, kills it */
    child = fork();
    if (child < 0) DIE("fork");
    if (child == 0) {
      close(lfd);
      for (int i = 0; i < n; i++) pthread_create(&snd[i], NULL, sender, NULL);
      for (int i = 0; i < n; i++) pthread_join(snd[i], NULL);
      _exit(0);
    }
  }
  for (int i = 0; i < n; i++) {
    if (!two) pthread_create(&snd[i], NULL, sender, NULL);
    int fd = accept(lfd, NULL, NULL);
    if (fd < 0) DIE("accept");
    pthread_create(&rcv[i], NULL, receiver, (void*)(long)fd);
  }
  usleep((useconds_t)(warm * 1e6));
  cpu_snap_t c0, c1;
  cpu_snap(&c0);
  double k0 = two ? proc_cpu_s(child) : 0;
  g_measuring = 1;
  uint64_t t0 = now_ns();
  usleep((useconds_t)(dur * 1e6));
  g_measuring = 0;
  uint64_t t1 = now_ns();
  cpu_snap(&c1);
  double k1 = two ? proc_cpu_s(child) : 0;
  unsigned long long bytes = g_bytes;
  g_stop = 1;
  if (two) {
    kill(child, SIGKILL);
    waitpid(child, NULL, 0);
  } else {
    for (int i = 0; i < n; i++) pthread_join(snd[i], NULL);
  }
  for (int i = 0; i < n; i++) pthread_join(rcv[i], NULL);
  double secs = (double)(t1 - t0) / 1e9, proc = c1.proc_s - c0.proc_s + (k1 - k0);
  printf(
      "stream_uring streams=%d size=%d mode=%s processes=%d duration=%.3f bytes=%llu "
      "gbit_per_sec=%.3f\n",
      n, g_size,
      g_file ? "sendfile"
      : g_zc ? "send_zc"
             : "write",
      two ? 2 : 1, secs, bytes, (double)bytes * 8 / secs / 1e9);
  printf("cpu: process=%.2f cores us_cpu_per_kb=%.4f\n", proc / secs,
         bytes ? proc * 1e6 / ((double)bytes / 1024) : 0.0);
  if (g_zc)
    printf("zc_notifications=%llu zc_copied=%llu\n", (unsigned long long)g_zc_sends,
           (unsigned long long)g_zc_copied);
  return 0;
}
