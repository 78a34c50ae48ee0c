/* udp_gso_ref - one UDP stream over loopback with plain blocking syscalls, three ways: the limit
 * a UDP stream is compared to when it batches its datagrams or hands them to the kernel as one
 * super-buffer.
 *
 * The sender (a child process, as volley's master and slave, or iperf3's two ends, are two
 * processes) sends -s byte datagrams as fast as the socket takes them; the receiver (the parent)
 * counts what arrives. By -m:
 *   plain  send() of one datagram, recv() of one: iperf3 -u -b 0's system calls;
 *   mmsg   sendmmsg() of -b datagrams, recvmmsg() of up to -b (MSG_WAITFORONE);
 *   gso    send() of a super-buffer of as many datagrams as fit in 64 KiB (at most 64) with
 *          UDP_SEGMENT = -s, which the kernel cuts into datagrams of -s bytes; the receiver sets
 *          UDP_GRO and reads whole super-buffers with recvmsg(), counting datagrams from the
 *          UDP_GRO control message (the segment size; the last may be shorter).
 * -P USEC (with mmsg): the receiver does not block; when it finds nothing it sleeps USEC (a timer,
 * not a wake-up from the sender), then reads again: what the sender's wake-ups of a blocked
 * receiver cost, apart from any program around them.
 * Prints datagrams sent and received while measuring, the loss, the received rate in Mb/s
 * (mbit_per_sec=, payload bytes received, as iperf3 counts), and CPU (user + system) per datagram
 * of each end.
 *
 *   udp_gso_ref -m plain|mmsg|gso -s 1472 -d 5 -w 1 [-b 64] [-P USEC]
 * Build: cc -O2 -Wall -Wextra -std=gnu11 -I ../shared/bench/ref udp_gso_ref.c
 */
#include "pp_common.h"
#include <netinet/udp.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/wait.h>

#ifndef UDP_SEGMENT
#define UDP_SEGMENT 103
#endif
#ifndef UDP_GRO
#define UDP_GRO 104
#endif

enum mode { PLAIN, MMSG, GSO };
enum { MAX_BATCH = 1024, MAX_SEGMENTS = 64, SUPER = 65507 };

/* What the two processes share: the parent says when to count and stop, the child counts. */
struct shared {
  volatile int measuring, stop;
  _Atomic unsigned long long sent;
};

static enum mode g_mode = PLAIN;
static int g_size = 1472, g_batch = 64, g_pause = -1;

/* Datagrams of g_size in one super-buffer. */
static int segments(void) {
  int n = SUPER / g_size;
  return n > MAX_SEGMENTS ? MAX_SEGMENTS : n;
}

static void sender(int port, struct shared* sh) {
  int fd = socket(AF_INET, SOCK_DGRAM, 0);
  struct sockaddr_in to = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
  to.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (fd < 0 || connect(fd, (struct sockaddr*)&to, sizeof(to))) DIE("sender socket");
  int per_call = g_mode == MMSG ? g_batch : g_mode == GSO ? segments() : 1;
  char* buf = calloc((size_t)per_call, (size_t)g_size);
  struct mmsghdr msgs[MAX_BATCH];
  struct iovec iov[MAX_BATCH];
  for (int i = 0; i < per_call && g_mode == MMSG; i++) {
    iov[i] = (struct iovec){buf + (size_t)i * (size_t)g_size, (size_t)g_size};
    msgs[i] = (struct mmsghdr){.msg_hdr = {.msg_iov = &iov[i], .msg_iovlen = 1}};
  }
  if (g_mode == GSO) {
    int seg = g_size;
    if (setsockopt(fd, SOL_UDP, UDP_SEGMENT, &seg, sizeof(seg))) DIE("UDP_SEGMENT");
  }
  while (!sh->stop) {
    int sent;
    if (g_mode == MMSG) {
      sent = sendmmsg(fd, msgs, (unsigned)per_call, 0);
    } else {
      sent = send(fd, buf, (size_t)per_call * (size_t)g_size, 0) < 0 ? -1 : per_call;
    }
    if (sent < 0) {
      if (errno == ENOBUFS || errno == EAGAIN || errno == ECONNREFUSED) continue;
      DIE("send");
    }
    if (sh->measuring) sh->sent += (unsigned long long)sent;
  }
  _exit(0);
}

/* Datagrams in one message that arrived: the UDP_GRO control message, when there is one, gives
 * the size each was sent with. */
static unsigned long long datagrams_in(struct msghdr* m, size_t bytes) {
  for (struct cmsghdr* c = CMSG_FIRSTHDR(m); c; c = CMSG_NXTHDR(m, c)) {
    if (c->cmsg_level == SOL_UDP && c->cmsg_type == UDP_GRO) {
      int seg;
      memcpy(&seg, CMSG_DATA(c), sizeof(seg));
      return seg > 0 ? (bytes + (size_t)seg - 1) / (size_t)seg : 1;
    }
  }
  return 1;
}

/* user + system CPU seconds of another process, from /proc/PID/stat (as stream_ref's) */
static double proc_cpu_s_of(pid_t pid) {
  char path[64], text[1024];
  snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
  FILE* f = fopen(path, "r");
  if (!f) return 0;
  size_t len = fread(text, 1, sizeof(text) - 1, f);
  fclose(f);
  text[len] = 0;
  char* p = strrchr(text, ')');
  unsigned long long ut = 0, st = 0;
  if (!p || sscanf(p + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %llu %llu", &ut, &st) != 2) {
    return 0;
  }
  return (double)(ut + st) / (double)sysconf(_SC_CLK_TCK);
}

int main(int argc, char** argv) {
  double dur = 5, warm = 1;
  int opt;
  while ((opt = getopt(argc, argv, "m:s:b:d:w:P:")) != -1) {
    switch (opt) {
      case 'm':
        g_mode = !strcmp(optarg, "gso") ? GSO : !strcmp(optarg, "mmsg") ? MMSG : PLAIN;
        if (g_mode == PLAIN && strcmp(optarg, "plain")) DIE("-m plain, mmsg or gso");
        break;
      case 's': g_size = atoi(optarg); break;
      case 'b': g_batch = atoi(optarg); break;
      case 'd': dur = atof(optarg); break;
      case 'w': warm = atof(optarg); break;
      case 'P': g_pause = atoi(optarg); break;
      default:
        fprintf(
            stderr,
            "usage: %s [-m plain|mmsg|gso] [-s size] [-b batch] [-d secs] [-w warmup] [-P usec]\n",
            argv[0]);
        return 2;
    }
  }
  if (g_size < 1 || g_size > SUPER || g_batch < 1 || g_batch > MAX_BATCH) DIE("bad -s or -b");
  int fd = socket(AF_INET, SOCK_DGRAM, 0);
  struct sockaddr_in at = {.sin_family = AF_INET};
  at.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof(at);
  if (fd < 0 || bind(fd, (struct sockaddr*)&at, sizeof(at)) ||
      getsockname(fd, (struct sockaddr*)&at, &len)) {
    DIE("receiver socket");
  }
  int on = 1;
  if (g_mode == GSO && setsockopt(fd, SOL_UDP, UDP_GRO, &on, sizeof(on))) DIE("UDP_GRO");
  /* The receiver's wait ends every 100 ms, so it sees the end of the measurement without a
   * datagram. */
  struct timeval tick = {0, 100000};
  setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tick, sizeof(tick));
  struct shared* sh =
      mmap(NULL, sizeof(*sh), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  if (sh == MAP_FAILED) DIE("mmap");
  pid_t child = fork();
  if (child < 0) DIE("fork");
  if (child == 0) sender(ntohs(at.sin_port), sh);

  /* The receive buffers: -b slots of one datagram (mmsg), one super-buffer (gso), one datagram. */
  int slots = g_mode == MMSG ? g_batch : 1;
  size_t slot = g_mode == GSO ? 65536 : (size_t)g_size;
  char* buf = malloc((size_t)slots * slot);
  struct mmsghdr msgs[MAX_BATCH];
  struct iovec iov[MAX_BATCH];
  char control[CMSG_SPACE(sizeof(int))];
  for (int i = 0; i < slots; i++) {
    iov[i] = (struct iovec){buf + (size_t)i * slot, slot};
    msgs[i] = (struct mmsghdr){.msg_hdr = {.msg_iov = &iov[i], .msg_iovlen = 1}};
  }
  unsigned long long got = 0, bytes = 0, sent0 = 0;
  uint64_t t0 = now_ns(), start = 0, end = t0 + (uint64_t)((warm + dur) * 1e9);
  uint64_t warm_end = t0 + (uint64_t)(warm * 1e9);
  double c0 = 0, k0 = 0;
  for (;;) {
    uint64_t t = now_ns();
    if (!start && t >= warm_end) {
      cpu_snap_t c;
      cpu_snap(&c);
      c0 = c.proc_s;
      k0 = proc_cpu_s_of(child);
      sent0 = sh->sent;
      sh->measuring = 1;
      start = t;
    }
    if (t >= end) break;
    int n;
    if (g_mode == MMSG) {
      n = recvmmsg(fd, msgs, (unsigned)slots, g_pause >= 0 ? MSG_DONTWAIT : MSG_WAITFORONE, NULL);
      if (n < 0 && errno == EAGAIN && g_pause > 0) {
        const struct timespec pause = {0, g_pause * 1000L};
        nanosleep(&pause, NULL);
      }
      if (n > 0 && start) {
        for (int i = 0; i < n; i++) bytes += msgs[i].msg_len;
        got += (unsigned long long)n;
      }
    } else {
      msgs[0].msg_hdr.msg_control = control;
      msgs[0].msg_hdr.msg_controllen = sizeof(control);
      ssize_t r = recvmsg(fd, &msgs[0].msg_hdr, 0);
      n = r < 0 ? -1 : 1;
      if (r > 0 && start) {
        bytes += (unsigned long long)r;
        got += g_mode == GSO ? datagrams_in(&msgs[0].msg_hdr, (size_t)r) : 1;
      }
    }
    if (n < 0 && errno != EAGAIN && errno != EINTR) DIE("receive");
  }
  sh->measuring = 0;
  uint64_t t1 = now_ns();
  cpu_snap_t c1;
  cpu_snap(&c1);
  double k1 = proc_cpu_s_of(child);
  unsigned long long sent = sh->sent - sent0;
  sh->stop = 1;
  kill(child, SIGKILL);
  waitpid(child, NULL, 0);
  double secs = (double)(t1 - start) / 1e9;
  printf(
      "udp_gso_ref mode=%s size=%d per_call=%d processes=2 duration=%.3f sent=%llu received=%llu "
      "loss_pct=%.2f mbit_per_sec=%.1f\n",
      g_mode == GSO    ? "gso"
      : g_mode == MMSG ? "mmsg"
                       : "plain",
      g_size,
      g_mode == MMSG  ? g_batch
      : g_mode == GSO ? segments()
                      : 1,
      secs, sent, got, sent > got ? 100.0 * (double)(sent - got) / (double)sent : 0.0,
      (double)bytes * 8 / secs / 1e6);
  printf("cpu: sender_us_per_datagram=%.3f receiver_us_per_datagram=%.3f\n",
         sent ? (k1 - k0) * 1e6 / (double)sent : 0.0,
         got ? (c1.proc_s - c0) * 1e6 / (double)got : 0.0);
  return 0;
}
