/* stream_ev - stream_ref (../shared/bench/ref) with a choice of receiver, to see what the way a
 * reader reads and waits does to one-way bulk over loopback, apart from any program around it.
 *
 * The sender is stream_ref's: blocking write()s of -s bytes (or sendfile() of -f FILE). The
 * receiver, by -R:
 *   block  blocking read()s of -A bytes (default -s): stream_ref's own receiver;
 *   epoll  a non-blocking socket in an edge-triggered epoll set (EPOLLIN | EPOLLRDHUP), read with
 *          recvmsg() of -A bytes and TCP_INQ (the kernel's count of what is left), read again
 *          while that count is not 0, and epoll_wait() when it is: volley's reader, bare.
 * -L BYTES sets the receiver's SO_RCVLOWAT (the kernel wakes it once that much is queued).
 * Output as stream_ref's, with reader= ask= lowat= added to the first line.
 *
 *   stream_ev -p -n 1 -s 65536 -d 5 -w 1 [-f FILE] [-R block|epoll] [-A BYTES] [-L BYTES]
 * Build: cc -O2 -Wall -Wextra -std=gnu11 -I ../shared/bench/ref stream_ev.c -lpthread
 */
#include "pp_common.h"
#include <fcntl.h>
#include <pthread.h>
#include <sys/sendfile.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <sys/epoll.h>

static int g_port, g_size = 65536, g_epoll, g_ask, g_lowat;
static const char* g_file;
static volatile int g_stop, g_measuring;
static _Atomic unsigned long long g_bytes;

static void* sender(void* arg) {
  (void)arg;
  int fd = connect_lo(g_port), file = -1;
  off_t file_size = 0;
  if (g_file) {
    struct stat st;
    file = open(g_file, O_RDONLY);
    if (file < 0 || fstat(file, &st)) DIE("open %s", g_file);
    file_size = st.st_size;
  }
  char* buf = calloc(1, (size_t)g_size);
  while (!g_stop) {
    if (file >= 0) {
      off_t off = 0;
      while (!g_stop && off < file_size)
        if (sendfile(fd, file, &off, (size_t)g_size) <= 0) {
          g_stop = 1;
          break;
        }
    } else if (write(fd, buf, (size_t)g_size) <= 0) {
      break;
    }
  }
  shutdown(fd, SHUT_WR);
  close(fd);
  return NULL;
}

static void* receiver(void* arg) {
  int fd = (int)(long)arg;
  size_t ask = (size_t)(g_ask > 0 ? g_ask : g_size);
  char* buf = malloc(ask);
  ssize_t r;
  if (g_lowat > 1 && setsockopt(fd, SOL_SOCKET, SO_RCVLOWAT, &g_lowat, sizeof g_lowat))
    DIE("SO_RCVLOWAT");
  if (!g_epoll) {
    while ((r = read(fd, buf, ask)) > 0)
      if (g_measuring) g_bytes += (unsigned long long)r;
    close(fd);
    return NULL;
  }
  int one = 1, ep = epoll_create1(0);
  if (setsockopt(fd, IPPROTO_TCP, TCP_INQ, &one, sizeof one)) DIE("TCP_INQ");
  fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
  struct epoll_event ev = {.events = EPOLLIN | EPOLLET | EPOLLRDHUP, .data.fd = fd};
  if (ep < 0 || epoll_ctl(ep, EPOLL_CTL_ADD, fd, &ev)) DIE("epoll");
  for (;;) {
    int left = 1;
    while (left != 0) {
      struct iovec iov = {buf, ask};
      char control[CMSG_SPACE(sizeof(int))];
      struct msghdr msg = {.msg_iov = &iov,
                           .msg_iovlen = 1,
                           .msg_control = control,
                           .msg_controllen = sizeof control};
      r = recvmsg(fd, &msg, MSG_DONTWAIT);
      if (r == 0 || (r < 0 && errno != EAGAIN)) goto out;
      if (r < 0) break; /* nothing there after all: wait */
      if (g_measuring) g_bytes += (unsigned long long)r;
      left = -1;
      for (struct cmsghdr* c = CMSG_FIRSTHDR(&msg); c; c = CMSG_NXTHDR(&msg, c))
        if (c->cmsg_level == IPPROTO_TCP && c->cmsg_type == TCP_CM_INQ)
          memcpy(&left, CMSG_DATA(c), sizeof left);
    }
    struct epoll_event got;
    if (epoll_wait(ep, &got, 1, -1) < 0 && errno != EINTR) break;
  }
out:
  close(ep);
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
  while ((opt = getopt(argc, argv, "n:s:d:w:f:pR:A:L:")) != -1) {
    switch (opt) {
      case 'n': n = atoi(optarg); break;
      case 's': g_size = atoi(optarg); break;
      case 'd': dur = atof(optarg); break;
      case 'w': warm = atof(optarg); break;
      case 'f': g_file = optarg; break;
      case 'p': two = 1; break;
      case 'R': g_epoll = !strcmp(optarg, "epoll"); break;
      case 'A': g_ask = atoi(optarg); break;
      case 'L': g_lowat = atoi(optarg); break;
      default:
        fprintf(stderr,
                "usage: %s [-n streams] [-s size] [-d secs] [-w warmup] [-f file] [-p] [-R "
                "block|epoll] [-A ask] [-L lowat]\n",
                argv[0]);
        return 2;
    }
  }
  if (n < 1 || n > 64 || g_size < 1) DIE("bad -n or -s");
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
      "stream_ev streams=%d size=%d mode=%s processes=%d reader=%s ask=%d lowat=%d duration=%.3f "
      "bytes=%llu gbit_per_sec=%.3f\n",
      n, g_size, g_file ? "sendfile" : "write", two ? 2 : 1, g_epoll ? "epoll" : "block",
      g_ask > 0 ? g_ask : g_size, g_lowat > 1 ? g_lowat : 1, secs, bytes,
      (double)bytes * 8 / secs / 1e9);
  printf("cpu: process=%.2f cores us_cpu_per_kb=%.4f\n", proc / secs,
         bytes ? proc * 1e6 / ((double)bytes / 1024) : 0.0);
  return 0;
}
