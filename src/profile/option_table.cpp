#include "option_table.hpp"

#include <arpa/inet.h>
#include <sys/socket.h>

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <cstdint>
#include <vector>

#include "volley/core/host_port.hpp"
#include "volley/core/limits.hpp"
#include "volley/core/units.hpp"
#include "volley/core/suggest.hpp"

namespace volley::profile::detail {
namespace {

constexpr KindMask kReadWrite = bit(FlowopKind::kRead) | bit(FlowopKind::kWrite) |
                                bit(FlowopKind::kSend) | bit(FlowopKind::kRecv);

std::string lower(std::string_view s) {
  std::string out(s);
  for (auto& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

std::size_t where(const LocatedText& v) { return v.offset_at(0); }

/// A size > 0, or nullopt after reporting why not.
std::optional<std::uint64_t> positive_size(std::string_view option, std::string_view text,
                                           std::size_t offset, ParseContext& ctx) {
  const auto parsed = core::parse_size(text);
  if (!parsed.value) {
    ctx.error(offset, fmt::format("option '{}': {}", option, parsed.error));
    return std::nullopt;
  }
  if (*parsed.value == 0) {
    ctx.error(offset, fmt::format("option '{}' must be greater than 0", option));
    return std::nullopt;
  }
  if (*parsed.value > core::kMaxIoBytes) {
    ctx.error(offset, fmt::format("option '{}' is {} bytes; the most is {}", option, *parsed.value,
                                  core::format_bytes(core::kMaxIoBytes)));
    return std::nullopt;
  }
  return parsed.value;
}

std::optional<std::uint64_t> positive_count(const LocatedText& v, std::string_view option,
                                            ParseContext& ctx) {
  const auto parsed = core::parse_count(v.text);
  if (!parsed.value) {
    ctx.error(where(v), fmt::format("option '{}': {}", option, parsed.error));
    return std::nullopt;
  }
  if (*parsed.value == 0) {
    ctx.error(where(v), fmt::format("option '{}' must be at least 1", option));
    return std::nullopt;
  }
  return parsed.value;
}

/// A plain decimal integer in [lo, hi], or nullopt (the caller reports).
std::optional<std::uint64_t> integer_in(std::string_view s, std::uint64_t lo, std::uint64_t hi) {
  if (s.empty() || s.size() > 19) return std::nullopt;
  std::uint64_t v = 0;
  for (char c : s) {
    if (c < '0' || c > '9') return std::nullopt;
    v = v * 10 + static_cast<std::uint64_t>(c - '0');
  }
  if (v < lo || v > hi) return std::nullopt;
  return v;
}

std::optional<Nanoseconds> positive_duration(const LocatedText& v, std::string_view option,
                                             ParseContext& ctx) {
  const auto parsed = core::parse_duration(v.text, core::DurationSyntax::kUperf);
  if (!parsed.value) {
    ctx.error(where(v), fmt::format("option '{}': {}", option, parsed.error));
    return std::nullopt;
  }
  if (!parsed.warning.empty()) {
    ctx.warning(where(v), fmt::format("option '{}': {}", option, parsed.warning));
  }
  if (parsed.value->count() == 0) {
    ctx.error(where(v), fmt::format("option '{}' must be longer than 0", option));
    return std::nullopt;
  }
  return parsed.value;
}

void apply_size(const LocatedText& v, FlowopDraft& d, ParseContext& ctx) {
  const std::string text = v.text;
  if (lower(text.substr(0, 5)) != "rand(") {
    if (auto n = positive_size("size", text, where(v), ctx)) d.size = SizeSpec::fixed(*n);
    return;
  }
  if (!(bit(d.kind) & kReadWrite)) {
    ctx.error(where(v), "size=rand(...) applies to read, write, send and recv only");
    return;
  }
  const std::size_t comma = text.find(',');
  if (text.back() != ')' || comma == std::string::npos) {
    ctx.error(where(v), fmt::format("option 'size': expected rand(MIN,MAX), got '{}'", text));
    return;
  }
  const std::size_t max_end = text.size() - 1;
  const auto lo = positive_size("size", text.substr(5, comma - 5), v.offset_at(5), ctx);
  const auto hi = positive_size("size", text.substr(comma + 1, max_end - comma - 1),
                                v.offset_at(comma + 1), ctx);
  if (!lo || !hi) return;
  if (*lo > *hi) {
    ctx.error(where(v),
              fmt::format("option 'size': rand(MIN,MAX) needs MIN <= MAX, got {} > {}", *lo, *hi));
    return;
  }
  d.size = SizeSpec{*lo, *hi};
}

void apply_rsize(const LocatedText& v, FlowopDraft& d, ParseContext& ctx) {
  d.rsize_bytes = positive_size("rsize", v.text, where(v), ctx);
}

void apply_count(const LocatedText& v, FlowopDraft& d, ParseContext& ctx) {
  if (auto n = positive_count(v, "count", ctx)) d.common.count = *n;
}

void apply_conn(const LocatedText& v, FlowopDraft& d, ParseContext& ctx) {
  if (auto n = integer_in(v.text, 1, 0xFFFF'FFFFU)) {
    d.common.connection = static_cast<std::uint32_t>(*n);
    return;
  }
  ctx.error(where(v), fmt::format("option 'conn': '{}' is not a connection number (1 or more; "
                                  "leave conn= out for the anonymous connection)",
                                  v.text));
}

void apply_canfail(const LocatedText&, FlowopDraft& d, ParseContext&) { d.common.canfail = true; }

void apply_timeout(const LocatedText& v, FlowopDraft& d, ParseContext& ctx) {
  d.common.timeout = positive_duration(v, "timeout", ctx);
}

void apply_duration(const LocatedText& v, FlowopDraft& d, ParseContext& ctx) {
  d.duration = positive_duration(v, "duration", ctx);
}

void apply_busy(const LocatedText&, FlowopDraft& d, ParseContext&) { d.busy = true; }
void apply_idle(const LocatedText&, FlowopDraft& d, ParseContext&) { d.idle = true; }
void apply_non_blocking(const LocatedText&, FlowopDraft&, ParseContext&) {
  // Accepted for uperf compatibility: volley's I/O is always non-blocking.
}

void apply_remotehost(const LocatedText& v, FlowopDraft& d, ParseContext& ctx) {
  core::HostPort parsed = core::parse_host_port(v.text);
  if (parsed.error.empty() && parsed.port) {
    parsed.error = fmt::format(
        "'{}' has a port: remotehost takes the host only (the slave's "
        "control port is -P/--port, a data port is port=)",
        v.text);
  }
  if (!parsed.error.empty()) {
    ctx.error(where(v), "option 'remotehost': " + parsed.error);
    return;
  }
  d.connection.remotehost = std::move(parsed.host);
}

void apply_protocol(const LocatedText& v, FlowopDraft& d, ParseContext& ctx) {
  static constexpr std::array<std::string_view, 8> kKnown{"tcp",  "udp",  "tls",   "ssl",
                                                          "unix", "sctp", "vsock", "rds"};
  const std::string p = lower(v.text);
  if (p == "tcp" || p == "udp") {
    d.connection.protocol = p == "tcp" ? Protocol::kTcp : Protocol::kUdp;
    return;
  }
  if (p == "tls" || p == "ssl") {  // ssl: uperf's name for it
    d.connection.protocol = Protocol::kTls;
    return;
  }
  for (auto known : kKnown) {
    if (p == known) {
      ctx.error(where(v), fmt::format("protocol '{}' is not supported yet (volley runs tcp, udp "
                                      "and tls)",
                                      p));
      return;
    }
  }
  ctx.error(where(v),
            fmt::format("unknown protocol '{}'{}", v.text, core::did_you_mean(p, kKnown)));
}

void apply_port(const LocatedText& v, FlowopDraft& d, ParseContext& ctx) {
  if (auto n = integer_in(v.text, 1, 65535)) {
    d.connection.port = static_cast<std::uint16_t>(*n);
    return;
  }
  ctx.error(where(v), fmt::format("option 'port': '{}' is not a port number (1 to 65535)", v.text));
}

void apply_wndsz(const LocatedText& v, FlowopDraft& d, ParseContext& ctx) {
  d.connection.window_bytes = positive_size("wndsz", v.text, where(v), ctx);
}

void apply_tcp_nodelay(const LocatedText&, FlowopDraft& d, ParseContext&) {
  d.connection.tcp_nodelay = true;
}

void apply_cc(const LocatedText& v, FlowopDraft& d, ParseContext&) {
  d.connection.congestion_control = v.text;
}

/// The most addresses one srcaddr= range may name: enough for millions of connections.
constexpr std::uint64_t kMostSourceAddresses = 4096;

void apply_srcaddr(const LocatedText& v, FlowopDraft& d, ParseContext& ctx) {
  const std::string_view text = v.text;
  const std::size_t dash = text.find('-');
  const std::string first(text.substr(0, dash));
  const std::string last(dash == std::string_view::npos ? first : text.substr(dash + 1));
  std::array<unsigned char, 16> a{};
  std::array<unsigned char, 16> b{};
  const auto parse = [](const std::string& s, std::array<unsigned char, 16>& out) -> int {
    if (::inet_pton(AF_INET, s.c_str(), out.data()) == 1) return AF_INET;
    if (::inet_pton(AF_INET6, s.c_str(), out.data()) == 1) return AF_INET6;
    return 0;
  };
  const int fa = parse(first, a);
  const int fb = parse(last, b);
  if (fa == 0 || fb == 0) {
    ctx.error(where(v), fmt::format("option 'srcaddr': '{}' is not an address, nor a range "
                                    "FIRST-LAST of addresses (e.g. 198.18.0.1-198.18.0.8)",
                                    fa == 0 ? first : last));
    return;
  }
  if (fa != fb) {
    ctx.error(where(v), fmt::format("option 'srcaddr': '{}' and '{}' are not of one family "
                                    "(IPv4 or IPv6)",
                                    first, last));
    return;
  }
  const std::size_t width = fa == AF_INET ? 4 : 16;
  // The range's size from the last 8 bytes (the bytes before them must be equal).
  const std::size_t head = width > 8 ? width - 8 : 0;
  if (!std::equal(a.begin(), a.begin() + static_cast<std::ptrdiff_t>(head), b.begin())) {
    ctx.error(where(v), fmt::format("option 'srcaddr': {}-{} names more than {} addresses", first,
                                    last, kMostSourceAddresses));
    return;
  }
  const auto tail = [&](const std::array<unsigned char, 16>& x) {
    std::uint64_t n = 0;
    for (std::size_t i = head; i < width; ++i) n = (n << 8) | x[i];
    return n;
  };
  const std::uint64_t lo = tail(a);
  const std::uint64_t hi = tail(b);
  if (hi < lo) {
    ctx.error(where(v), fmt::format("option 'srcaddr': the range {}-{} runs backwards: write "
                                    "the lower address first",
                                    first, last));
    return;
  }
  if (hi - lo >= kMostSourceAddresses) {
    ctx.error(where(v), fmt::format("option 'srcaddr': {}-{} names {} addresses; the most is {}",
                                    first, last, hi - lo + 1, kMostSourceAddresses));
    return;
  }
  d.connection.source_addresses.clear();
  for (std::uint64_t n = lo; n <= hi; ++n) {
    std::array<unsigned char, 16> x = a;
    for (std::size_t i = width, k = 0; i > head; --i, ++k) {
      x[i - 1] = static_cast<unsigned char>((n >> (8 * k)) & 0xff);
    }
    std::array<char, INET6_ADDRSTRLEN> out{};
    ::inet_ntop(fa, x.data(), out.data(), static_cast<socklen_t>(out.size()));
    d.connection.source_addresses.emplace_back(out.data());
  }
}

void apply_tls_version(const LocatedText& v, FlowopDraft& d, ParseContext& ctx) {
  const std::string t = lower(v.text);
  if (t == "1.3" || t == "tlsv1.3") {
    d.connection.tls.version = TlsVersion::k13;
  } else if (t == "1.2" || t == "tlsv1.2") {
    d.connection.tls.version = TlsVersion::k12;
  } else {
    ctx.error(where(v), fmt::format("option 'tls_version': '{}' is not a TLS version volley "
                                    "offers (1.3 or 1.2)",
                                    v.text));
  }
}

void apply_cipher(const LocatedText& v, FlowopDraft& d, ParseContext&) {
  d.connection.tls.cipher = v.text;  // checked against the version once both are read
}

void apply_resume(const LocatedText&, FlowopDraft& d, ParseContext&) {
  d.connection.tls.resume = true;
}

void apply_ktls(const LocatedText& v, FlowopDraft& d, ParseContext& ctx) {
  const std::string t = lower(v.text);
  if (t.empty() || t == "on") {
    d.connection.tls.ktls = KernelTls::kOn;
  } else if (t == "try") {
    d.connection.tls.ktls = KernelTls::kTry;
  } else if (t == "off") {
    d.connection.tls.ktls = KernelTls::kOff;
  } else {
    ctx.error(where(v),
              fmt::format("option 'ktls': '{}' is not on, try or off (ktls alone is on)", v.text));
  }
}

void apply_gso(const LocatedText&, FlowopDraft& d, ParseContext&) { d.connection.gso = true; }

void apply_engine(const LocatedText& v, FlowopDraft&, ParseContext& ctx) {
  ctx.warning(where(v), fmt::format("option 'engine={}' is ignored: volley uses OpenSSL's default "
                                    "providers, not OpenSSL engines",
                                    v.text));
}

void apply_zerocopy(const LocatedText&, FlowopDraft& d, ParseContext&) { d.zerocopy = true; }

void apply_dir(const LocatedText& v, FlowopDraft& d, ParseContext&) { d.dir = v.text; }
void apply_file(const LocatedText& v, FlowopDraft& d, ParseContext&) { d.file = v.text; }

void apply_nfiles(const LocatedText& v, FlowopDraft& d, ParseContext& ctx) {
  if (auto n = positive_count(v, "nfiles", ctx)) d.nfiles = *n;
}

// name, takes_value, common (every flowop takes it), apply. Which kinds take the others: their
// rows in kFlowopTraits.
constexpr std::array<OptionSpec, 27> kOptions{{
    {"remotehost", true, false, apply_remotehost},
    {"protocol", true, false, apply_protocol},
    {"port", true, false, apply_port},
    {"size", true, false, apply_size},
    {"rsize", true, false, apply_rsize},
    {"count", true, true, apply_count},
    {"conn", true, true, apply_conn},
    {"canfail", false, true, apply_canfail},
    {"timeout", true, false, apply_timeout},
    {"duration", true, false, apply_duration},
    {"busy", false, false, apply_busy},
    {"idle", false, false, apply_idle},
    {"wndsz", true, false, apply_wndsz},
    {"tcp_nodelay", false, false, apply_tcp_nodelay},
    {"cc", true, false, apply_cc},
    {"srcaddr", true, false, apply_srcaddr},
    {"dir", true, false, apply_dir},
    {"file", true, false, apply_file},
    {"nfiles", true, false, apply_nfiles},
    {"non_blocking", false, true, apply_non_blocking},
    {"tls_version", true, false, apply_tls_version},
    {"cipher", true, false, apply_cipher},
    {"resume", false, false, apply_resume},
    {"ktls", false, false, apply_ktls, true},
    {"engine", true, false, apply_engine},
    {"zerocopy", false, false, apply_zerocopy, false, true},
    {"gso", false, false, apply_gso},
}};

/// Whether the space-separated `list` has the word `name`.
constexpr bool lists(std::string_view list, std::string_view name) {
  while (!list.empty()) {
    const std::size_t space = list.find(' ');
    if (list.substr(0, space) == name) return true;
    list = space == std::string_view::npos ? std::string_view() : list.substr(space + 1);
  }
  return false;
}

static_assert(
    [] {
      for (const FlowopTraits& row : kFlowopTraits) {
        std::string_view list = row.options;
        while (!list.empty()) {
          const std::size_t space = list.find(' ');
          const std::string_view word = list.substr(0, space);
          const bool known =
              std::any_of(kOptions.begin(), kOptions.end(),
                          [&](const OptionSpec& o) { return o.name == word && !o.common; });
          if (!known) return false;
          list = space == std::string_view::npos ? std::string_view() : list.substr(space + 1);
        }
      }
      return true;
    }(),
    "a kind's options must name rows of kOptions that not every flowop takes");

constexpr std::array<std::string_view, kOptions.size()> make_names() {
  std::array<std::string_view, kOptions.size()> names{};
  for (std::size_t i = 0; i < kOptions.size(); ++i) names[i] = kOptions[i].name;
  return names;
}
constexpr std::array<std::string_view, kOptions.size()> kOptionNames = make_names();

constexpr std::array<std::string_view, 5> kUnsupported{"encaps", "localhost", "method", "repeat",
                                                       "batch_size"};

}  // namespace

const OptionSpec* find_option(std::string_view lower_name) {
  for (const auto& spec : kOptions) {
    if (spec.name == lower_name) return &spec;
  }
  return nullptr;
}

bool applies(const OptionSpec& option, FlowopKind kind) {
  return option.common || lists(traits(kind).options, option.name);
}

std::string kinds_taking(const OptionSpec& option) {
  std::vector<std::string_view> kinds;
  for (const FlowopTraits& row : kFlowopTraits) {
    if (row.written && applies(option, row.kind)) kinds.push_back(row.name);
  }
  std::string out;
  for (std::size_t i = 0; i < kinds.size(); ++i) {
    if (i > 0) out += i + 1 == kinds.size() ? " and " : ", ";
    out += kinds[i];
  }
  return out;
}

std::span<const std::string_view> option_names() { return kOptionNames; }

bool is_unsupported_option(std::string_view lower_name) {
  if (lower_name.substr(0, 5) == "sctp_") return true;
  for (auto name : kUnsupported) {
    if (name == lower_name) return true;
  }
  return false;
}

}  // namespace volley::profile::detail
