/* tls_stream: one-way bulk transfer over TLS 1.3 on loopback with plain blocking OpenSSL calls,
 * stream_ref's TLS twin (bench/tls_bulk_vs_tls_stream.sh).
 *
 * One TCP connection, two processes (as volley's master and slave are): a forked child is the
 * client and writer, SSL_write() of -s byte blocks in a loop; the parent is the server and reader,
 * SSL_read() of -s byte blocks in a loop (TLS records carry at most 16 KiB, so a read returns at
 * most one record). The server's certificate is an ECDSA P-256 key made in-process and
 * self-signed, as volley's slave makes by default; the client does not verify it. -c picks the
 * TLS 1.3 cipher suite of both ends. No kTLS: OpenSSL encrypts in user space.
 * Prints gbit_per_sec= (bytes read while measuring), the suite negotiated, and CPU per KiB:
 * us_cpu_per_kb= (both ends), writer_us_per_kb= and reader_us_per_kb=.
 *
 * usage: tls_stream [-s size] [-d secs] [-w warmup] [-c TLS_AES_128_GCM_SHA256]
 * Build: cc -O2 -Wall -Wextra -std=gnu11 -I ../shared/bench/ref tls_stream.c -lpthread -lssl
 * -lcrypto
 */
#include "pp_common.h"
#include <pthread.h>
#include <signal.h>
#include <sys/wait.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>

static int g_size = 65536;
static volatile int g_measuring;
static _Atomic unsigned long long g_bytes;

#define SSL_DIE(what)                       \
  do {                                      \
    fprintf(stderr, "%s failed: ", (what)); \
    ERR_print_errors_fp(stderr);            \
    exit(1);                                \
  } while (0)

/* A TLS 1.3-only context with the one suite given (client or server). */
static SSL_CTX* tls_ctx(const SSL_METHOD* method, const char* suite) {
  SSL_CTX* ctx = SSL_CTX_new(method);
  if (!ctx) SSL_DIE("SSL_CTX_new");
  SSL_CTX_set_min_proto_version(ctx, TLS1_3_VERSION);
  SSL_CTX_set_max_proto_version(ctx, TLS1_3_VERSION);
  if (!SSL_CTX_set_ciphersuites(ctx, suite)) SSL_DIE("SSL_CTX_set_ciphersuites");
  return ctx;
}

/* An ECDSA P-256 key and a certificate for CN=localhost signed by itself, valid for a day. */
static void self_signed(EVP_PKEY** key, X509** cert) {
  *key = EVP_EC_gen("P-256");
  *cert = X509_new();
  if (!*key || !*cert) SSL_DIE("EVP_EC_gen");
  X509_set_version(*cert, 2);
  ASN1_INTEGER_set(X509_get_serialNumber(*cert), 1);
  X509_gmtime_adj(X509_getm_notBefore(*cert), 0);
  X509_gmtime_adj(X509_getm_notAfter(*cert), 86400);
  X509_NAME* name = X509_get_subject_name(*cert);
  X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_ASC, (const unsigned char*)"localhost", -1, -1,
                             0);
  X509_set_issuer_name(*cert, name);
  X509_set_pubkey(*cert, *key);
  if (!X509_sign(*cert, *key, EVP_sha256())) SSL_DIE("X509_sign");
}

/* The child: connects, handshakes, writes until it is killed (or the connection fails). */
static void writer(int port, const char* suite) {
  SSL_CTX* ctx = tls_ctx(TLS_client_method(), suite);
  SSL* ssl = SSL_new(ctx);
  SSL_set_fd(ssl, connect_lo(port));
  if (SSL_connect(ssl) != 1) SSL_DIE("SSL_connect");
  char* buf = calloc(1, (size_t)g_size);
  while (SSL_write(ssl, buf, g_size) > 0) {
  }
  _exit(0);
}

static void* reader(void* arg) {
  SSL* ssl = arg;
  char* buf = malloc((size_t)g_size);
  int r;
  while ((r = SSL_read(ssl, buf, g_size)) > 0)
    if (g_measuring) g_bytes += (unsigned long long)r;
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
  const char* suite = "TLS_AES_128_GCM_SHA256";
  int opt;
  while ((opt = getopt(argc, argv, "s:d:w:c:")) != -1) {
    switch (opt) {
      case 's': g_size = atoi(optarg); break;
      case 'd': dur = atof(optarg); break;
      case 'w': warm = atof(optarg); break;
      case 'c': suite = optarg; break;
      default:
        fprintf(stderr, "usage: %s [-s size] [-d secs] [-w warmup] [-c tls1.3_suite]\n", argv[0]);
        return 2;
    }
  }
  if (g_size < 1) DIE("bad -s");
  EVP_PKEY* key;
  X509* cert;
  self_signed(&key, &cert);
  SSL_CTX* ctx = tls_ctx(TLS_server_method(), suite);
  if (!SSL_CTX_use_certificate(ctx, cert) || !SSL_CTX_use_PrivateKey(ctx, key))
    SSL_DIE("SSL_CTX_use_certificate");
  int port = 0, lfd = make_listener(&port, 1);
  pid_t child = fork(); /* before any thread */
  if (child < 0) DIE("fork");
  if (child == 0) {
    close(lfd);
    writer(port, suite);
  }
  int fd = accept(lfd, NULL, NULL);
  if (fd < 0) DIE("accept");
  set_nodelay(fd);
  SSL* ssl = SSL_new(ctx);
  SSL_set_fd(ssl, fd);
  if (SSL_accept(ssl) != 1) SSL_DIE("SSL_accept");
  pthread_t rcv;
  pthread_create(&rcv, NULL, reader, ssl);
  usleep((useconds_t)(warm * 1e6));
  cpu_snap_t c0, c1;
  cpu_snap(&c0);
  double k0 = proc_cpu_s(child);
  g_measuring = 1;
  uint64_t t0 = now_ns();
  usleep((useconds_t)(dur * 1e6));
  g_measuring = 0;
  uint64_t t1 = now_ns();
  cpu_snap(&c1);
  double k1 = proc_cpu_s(child);
  unsigned long long bytes = g_bytes;
  kill(child, SIGKILL);
  waitpid(child, NULL, 0);
  pthread_join(rcv, NULL);
  double secs = (double)(t1 - t0) / 1e9, rd = c1.proc_s - c0.proc_s, wr = k1 - k0;
  double kib = (double)bytes / 1024;
  printf("tls_stream cipher=%s size=%d processes=2 duration=%.3f bytes=%llu gbit_per_sec=%.3f\n",
         SSL_get_cipher_name(ssl), g_size, secs, bytes, (double)bytes * 8 / secs / 1e9);
  printf("cpu: process=%.2f cores us_cpu_per_kb=%.4f writer_us_per_kb=%.4f reader_us_per_kb=%.4f\n",
         (rd + wr) / secs, bytes ? (rd + wr) * 1e6 / kib : 0.0, bytes ? wr * 1e6 / kib : 0.0,
         bytes ? rd * 1e6 / kib : 0.0);
  return 0;
}
