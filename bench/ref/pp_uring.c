/* pp_uring: io_uring TCP ping-pong over 127.0.0.1, pp_epoll's twin (same options, same output).
 * Client: T threads (default 1), each with its own ring driving its share of C connections;
 * every connection keeps exactly one size-byte message in flight (closed loop: send, receive
 * the full echo, send again).
 * Server: S threads (default 1), each with its own ring, echoing its share of the connections;
 * one blocking acceptor takes them all before the servers start.
 * Each ring is set up for one issuer with deferred task work (IORING_SETUP_SINGLE_ISSUER |
 * IORING_SETUP_DEFER_TASKRUN, where the kernel has them): completions are processed only when
 * the thread waits, in batches. A wait submits every operation queued since the last one. Plain
 * send and recv, no registered files or buffers: the reference of what io_uring itself buys.
 *
 * usage: pp_uring [-c conns] [-T client_threads] [-S server_threads]
 *                 [-d seconds] [-w warmup_s] [-s size] [-l] [-a ccpu,scpu]
 * Build: cc -O2 -Wall -Wextra -std=gnu11 -I ../shared/bench/ref pp_uring.c -lpthread -luring
 */
#include "pp_common.h"
#include <liburing.h>
#include <pthread.h>
#include <sched.h>

static int g_size = 64, g_lat = 0, g_port, g_conns = 1, g_ct = 1, g_st = 1;
static atomic_int g_stop, g_measure;
static int g_ccpu = -1, g_scpu = -1; /* -a client_cpu,server_cpu */
static pthread_barrier_t g_bar;
static int* g_accepted; /* the server side's sockets, in accept order */

static void pin_self(int cpu) {
  if (cpu < 0) return;
  cpu_set_t cs;
  CPU_ZERO(&cs);
  CPU_SET(cpu, &cs);
  if (pthread_setaffinity_np(pthread_self(), sizeof(cs), &cs)) DIE("setaffinity");
}

/* A ring with room for two operations per connection, set up for one thread. */
static void ring_init(struct io_uring* ring, int conns) {
  unsigned entries = 64;
  while (entries < 2u * (unsigned)conns && entries < 32768) entries *= 2;
  struct io_uring_params p = {.flags = IORING_SETUP_SINGLE_ISSUER | IORING_SETUP_DEFER_TASKRUN};
  if (io_uring_queue_init_params(entries, ring, &p) < 0) {
    memset(&p, 0, sizeof(p)); /* an older kernel: a plain ring */
    int e = io_uring_queue_init_params(entries, ring, &p);
    if (e < 0) {
      errno = -e;
      DIE("io_uring_queue_init");
    }
  }
}

static struct io_uring_sqe* sqe_of(struct io_uring* ring) {
  struct io_uring_sqe* sqe = io_uring_get_sqe(ring);
  if (!sqe) { /* full: hand what is queued to the kernel and try again */
    io_uring_submit(ring);
    sqe = io_uring_get_sqe(ring);
    if (!sqe) DIE("io_uring_get_sqe");
  }
  return sqe;
}

/* user_data: the connection's index, shifted, and whether the operation was a send. */
static void queue_recv(struct io_uring* ring, int fd, char* buf, int len, int i) {
  struct io_uring_sqe* sqe = sqe_of(ring);
  io_uring_prep_recv(sqe, fd, buf, (size_t)len, 0);
  io_uring_sqe_set_data64(sqe, (uint64_t)i << 1);
}
static void queue_send(struct io_uring* ring, int fd, const char* buf, int len, int i) {
  struct io_uring_sqe* sqe = sqe_of(ring);
  io_uring_prep_send(sqe, fd, buf, (size_t)len, MSG_WAITALL);
  io_uring_sqe_set_data64(sqe, ((uint64_t)i << 1) | 1);
}

/* Submits what is queued and waits up to 100 ms for a completion (so the stop flag is seen). */
static void submit_and_wait(struct io_uring* ring) {
  struct __kernel_timespec ts = {.tv_sec = 0, .tv_nsec = 100000000};
  struct io_uring_cqe* cqe;
  int e = io_uring_submit_and_wait_timeout(ring, &cqe, 1, &ts, NULL);
  if (e < 0 && e != -ETIME && e != -EINTR && e != -EBUSY) {
    errno = -e;
    DIE("io_uring wait");
  }
}

struct srv {
  int first, n;
  char pad[56];
};

static void* srv_worker(void* arg) {
  struct srv* s = arg;
  pin_self(g_scpu);
  struct io_uring ring;
  ring_init(&ring, s->n);
  char* bufs = malloc((size_t)s->n * (size_t)g_size);
  int* fds = &g_accepted[s->first];
  for (int i = 0; i < s->n; i++) queue_recv(&ring, fds[i], bufs + (size_t)i * g_size, g_size, i);
  while (!atomic_load_explicit(&g_stop, memory_order_relaxed)) {
    submit_and_wait(&ring);
    struct io_uring_cqe* cqe;
    unsigned head, seen = 0;
    io_uring_for_each_cqe(&ring, head, cqe) {
      seen++;
      int i = (int)(cqe->user_data >> 1);
      char* buf = bufs + (size_t)i * g_size;
      if (cqe->res <= 0) continue; /* the peer closed (the end of the run) */
      if (cqe->user_data & 1)
        queue_recv(&ring, fds[i], buf, g_size, i);
      else
        queue_send(&ring, fds[i], buf, cqe->res, i); /* echo what came */
    }
    io_uring_cq_advance(&ring, seen);
  }
  io_uring_queue_exit(&ring);
  free(bufs);
  return NULL;
}

static void* acceptor(void* arg) {
  int lfd = (int)(intptr_t)arg;
  pin_self(g_scpu);
  for (int i = 0; i < g_conns; i++) {
    int fd = accept(lfd, NULL, NULL);
    if (fd < 0) DIE("accept");
    set_nodelay(fd);
    g_accepted[i] = fd;
  }
  return NULL;
}

struct conn {
  int fd, got;
  uint64_t t0;
};
struct cli {
  int id, n;
  struct conn* c;
  uint64_t count;
  hist_t* h;
  char pad[64];
};

static void* client(void* arg) {
  struct cli* cl = arg;
  pin_self(g_ccpu);
  char* out = malloc((size_t)g_size);
  char* in = malloc((size_t)cl->n * (size_t)g_size);
  memset(out, 'x', (size_t)g_size);
  for (int i = 0; i < cl->n; i++) cl->c[i].fd = connect_lo(g_port);
  struct io_uring ring;
  ring_init(&ring, cl->n);
  pthread_barrier_wait(&g_bar);
  for (int i = 0; i < cl->n; i++) {
    cl->c[i].t0 = now_ns();
    queue_send(&ring, cl->c[i].fd, out, g_size, i);
  }
  while (!atomic_load_explicit(&g_stop, memory_order_relaxed)) {
    submit_and_wait(&ring);
    struct io_uring_cqe* cqe;
    unsigned head, seen = 0;
    io_uring_for_each_cqe(&ring, head, cqe) {
      seen++;
      int i = (int)(cqe->user_data >> 1);
      struct conn* c = &cl->c[i];
      char* buf = in + (size_t)i * g_size;
      if (cqe->res < 0 || (cqe->res == 0 && !(cqe->user_data & 1))) {
        errno = -cqe->res;
        DIE("client %s", cqe->user_data & 1 ? "send" : "recv");
      }
      if (cqe->user_data & 1) { /* sent: wait for the echo */
        queue_recv(&ring, c->fd, buf, g_size, i);
        continue;
      }
      c->got += cqe->res;
      if (c->got < g_size) {
        queue_recv(&ring, c->fd, buf + c->got, g_size - c->got, i);
        continue;
      }
      c->got = 0;
      __atomic_store_n(&cl->count, cl->count + 1, __ATOMIC_RELAXED);
      if (g_lat) {
        uint64_t t = now_ns();
        if (atomic_load_explicit(&g_measure, memory_order_relaxed)) h_add(cl->h, t - c->t0);
        c->t0 = t;
      }
      queue_send(&ring, c->fd, out, g_size, i);
    }
    io_uring_cq_advance(&ring, seen);
  }
  io_uring_queue_exit(&ring);
  for (int i = 0; i < cl->n; i++) close(cl->c[i].fd);
  free(out);
  free(in);
  return NULL;
}

int main(int argc, char** argv) {
  int opt;
  double dur = 5, warm = 0.5;
  while ((opt = getopt(argc, argv, "c:T:S:d:w:s:la:")) != -1) {
    switch (opt) {
      case 'c': g_conns = atoi(optarg); break;
      case 'T': g_ct = atoi(optarg); break;
      case 'S': g_st = atoi(optarg); break;
      case 'd': dur = atof(optarg); break;
      case 'w': warm = atof(optarg); break;
      case 's': g_size = atoi(optarg); break;
      case 'l': g_lat = 1; break;
      case 'a':
        if (sscanf(optarg, "%d,%d", &g_ccpu, &g_scpu) != 2) {
          fprintf(stderr, "-a ccpu,scpu\n");
          return 2;
        }
        break;
      default:
        fprintf(stderr,
                "usage: %s [-c conns] [-T cthreads] [-S sthreads] [-d sec] [-w warmup] [-s size] "
                "[-l] [-a client_cpu,server_cpu]\n",
                argv[0]);
        return 2;
    }
  }
  if (g_size < 1 || g_size > 65536 || g_conns < 1 || g_ct < 1 || g_st < 1) {
    fprintf(stderr, "bad args\n");
    return 2;
  }
  if (g_ct > g_conns) g_ct = g_conns;
  if (g_st > g_conns) g_st = g_conns;
  raise_nofile();
  int lfd = make_listener(&g_port, 4096);
  g_accepted = calloc((size_t)g_conns, sizeof(int));
  pthread_t *sth = calloc((size_t)g_st, sizeof(*sth)), *cth = calloc((size_t)g_ct, sizeof(*cth)),
            acc;
  pthread_create(&acc, NULL, acceptor, (void*)(intptr_t)lfd);
  struct cli* cl = calloc((size_t)g_ct, sizeof(*cl));
  pthread_barrier_init(&g_bar, NULL, (unsigned)g_ct + 1);
  for (int i = 0; i < g_ct; i++) {
    cl[i].id = i;
    cl[i].n = g_conns / g_ct + (i < g_conns % g_ct);
    cl[i].c = calloc((size_t)cl[i].n, sizeof(struct conn));
    if (g_lat) cl[i].h = calloc(1, sizeof(hist_t));
    pthread_create(&cth[i], NULL, client, &cl[i]);
  }
  pthread_join(acc, NULL); /* all accepted: the servers' shares are known */
  struct srv* sv = calloc((size_t)g_st, sizeof(*sv));
  for (int i = 0, first = 0; i < g_st; i++) {
    sv[i].first = first;
    sv[i].n = g_conns / g_st + (i < g_conns % g_st);
    first += sv[i].n;
    pthread_create(&sth[i], NULL, srv_worker, &sv[i]);
  }
  pthread_barrier_wait(&g_bar);
  usleep((useconds_t)(warm * 1e6));
  uint64_t c0 = 0, c1 = 0;
  cpu_snap_t s0, s1;
  for (int i = 0; i < g_ct; i++) c0 += __atomic_load_n(&cl[i].count, __ATOMIC_RELAXED);
  cpu_snap(&s0);
  uint64_t t0 = now_ns();
  atomic_store(&g_measure, 1);
  usleep((useconds_t)(dur * 1e6));
  atomic_store(&g_measure, 0);
  uint64_t t1 = now_ns();
  for (int i = 0; i < g_ct; i++) c1 += __atomic_load_n(&cl[i].count, __ATOMIC_RELAXED);
  cpu_snap(&s1);
  atomic_store(&g_stop, 1);
  for (int i = 0; i < g_ct; i++) pthread_join(cth[i], NULL);
  for (int i = 0; i < g_st; i++) pthread_join(sth[i], NULL);
  double wall = (t1 - t0) / 1e9, rts = (c1 - c0) / wall;
  printf(
      "pp_uring affinity=%d,%d conns=%d client_threads=%d server_threads=%d size=%d duration=%.3f "
      "round_trips=%llu rt_per_sec=%.0f rt_per_sec_per_conn=%.1f\n",
      g_ccpu, g_scpu, g_conns, g_ct, g_st, g_size, wall, (unsigned long long)(c1 - c0), rts,
      rts / g_conns);
  print_cpu(&s0, &s1, wall, rts);
  if (g_lat) {
    hist_t* h = calloc(1, sizeof(hist_t));
    for (int i = 0; i < g_ct; i++) h_merge(h, cl[i].h);
    h_print(h);
  }
  return 0;
}
