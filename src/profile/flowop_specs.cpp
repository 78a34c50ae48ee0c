#include "flowop_specs.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <concepts>
#include <string_view>
#include <type_traits>
#include <utility>

#include "volley/core/units.hpp"
#include "volley/profile/flowop_traits.hpp"
#include "tls_cipher.hpp"

namespace volley::profile::detail {
namespace {

using core::format_bytes;
using core::format_duration;
template <class T>
using Tag = std::type_identity<T>;

// ---- Helpers shared by several specs.

/// TLS options as a profile writes them, the defaults left out.
std::string tls_text(const TlsOptions& t) {
  std::string out;
  if (t.version == TlsVersion::k12) out += " tls_version=1.2";
  if (!t.cipher.empty()) out += fmt::format(" cipher={}", t.cipher);
  if (t.resume) out += " resume";
  if (t.ktls == KernelTls::kOn) out += " ktls";
  if (t.ktls == KernelTls::kTry) out += " ktls=try";
  return out;
}

/// Reports a missing required option; false when it is missing.
bool require(ParseContext& ctx, const FlowopDraft& draft, std::size_t element_offset, bool present,
             std::string_view what) {
  const std::string_view key = what.substr(0, what.find('='));
  if (present || draft.unresolved || draft.suggested.count(key) != 0) return present;
  ctx.error(element_offset, fmt::format("'{}' needs {}", traits(draft.kind).name, what));
  return false;
}

bool given(const FlowopDraft& d, std::string_view key) {
  return d.given.find(std::string(key)) != d.given.end();
}

std::optional<std::uint64_t> chunk_of(const FlowopDraft& d) {
  return d.size ? std::optional<std::uint64_t>(d.size->max_bytes) : std::nullopt;
}

std::string size_text(const SizeSpec& s) {
  if (!s.is_random()) return format_bytes(s.min_bytes);
  return fmt::format("rand({}, {})", format_bytes(s.min_bytes), format_bytes(s.max_bytes));
}

std::string optional_bytes(std::string_view name, const std::optional<std::uint64_t>& v) {
  return v ? fmt::format(" {}={}", name, format_bytes(*v)) : std::string();
}

std::string source_text(const FileSource& s) {
  return fmt::format(" {}={}", s.is_directory ? "dir" : "file", s.path);
}

// ---- One block per spec: build (kinds a profile writes), mirrored (when its mirror is another
// spec), text.

/// TLS options on a connection that is not TLS, or a cipher OpenSSL does not know for the
/// version: reported at the option; false when any was.
bool tls_options_fit(ParseContext& ctx, const FlowopDraft& d) {
  bool fit = true;
  if (d.connection.protocol != Protocol::kTls) {
    for (std::string_view key : {"tls_version", "cipher", "resume", "ktls"}) {
      const auto at = d.given.find(std::string(key));
      if (at == d.given.end()) continue;
      ctx.error(at->second,
                fmt::format("option '{}' needs protocol=tls (or ssl): this connection is {}", key,
                            protocol_name(d.connection.protocol)));
      fit = false;
    }
    return fit;
  }
  const auto cipher = d.given.find("cipher");
  if (cipher != d.given.end() && !d.connection.tls.cipher.empty()) {
    if (std::string why = tls_cipher_error(d.connection.tls.version, d.connection.tls.cipher);
        !why.empty()) {
      ctx.error(cipher->second, std::move(why));
      fit = false;
    }
  }
  return fit;
}

/// gso on a connection that is not UDP: reported at the option; false when it was.
bool gso_fits(ParseContext& ctx, const FlowopDraft& d) {
  const auto at = d.given.find("gso");
  if (at == d.given.end() || d.connection.protocol == Protocol::kUdp) return true;
  ctx.error(at->second, fmt::format("option 'gso' needs protocol=udp: this connection is {}",
                                    protocol_name(d.connection.protocol)));
  return false;
}

// connect, accept
template <class T>
requires std::same_as<T, ConnectOp> || std::same_as<T, AcceptOp> std::optional<FlowopSpec> build(
    Tag<T>, ParseContext& ctx, FlowopDraft& d, std::size_t at) {
  const bool host = require(ctx, d, at, given(d, "remotehost"), "remotehost=HOST");
  const bool proto =
      require(ctx, d, at, given(d, "protocol"), "protocol=tcp (uperf has no default protocol)");
  if (!host || !proto) return std::nullopt;
  const bool tls_fit = tls_options_fit(ctx, d);
  if (!gso_fits(ctx, d) || !tls_fit) return std::nullopt;
  return T{d.connection};
}
AcceptOp mirrored(const ConnectOp& s) { return {s.connection}; }
ConnectOp mirrored(const AcceptOp& s) { return {s.connection}; }
template <class T>
requires std::same_as<T, ConnectOp> || std::same_as<T, AcceptOp> std::string text(const T& s) {
  const ConnectionOptions& c = s.connection;
  std::string out =
      fmt::format(" remotehost={} protocol={}", c.remotehost, protocol_name(c.protocol));
  if (c.port) out += fmt::format(" port={}", *c.port);
  if (c.window_bytes) out += fmt::format(" wndsz={}", format_bytes(*c.window_bytes));
  if (c.tcp_nodelay) out += " tcp_nodelay";
  if (!c.congestion_control.empty()) out += fmt::format(" cc={}", c.congestion_control);
  if (c.source_addresses.size() == 1) out += fmt::format(" srcaddr={}", c.source_addresses[0]);
  if (c.source_addresses.size() > 1) {
    out += fmt::format(" srcaddr={}-{}", c.source_addresses.front(), c.source_addresses.back());
  }
  if (c.protocol == Protocol::kTls) out += tls_text(c.tls);
  if (c.gso) out += " gso";
  return out;
}

// disconnect
std::optional<FlowopSpec> build(Tag<DisconnectOp>, ParseContext&, FlowopDraft&, std::size_t) {
  return DisconnectOp{};
}
std::string text(const DisconnectOp&) { return {}; }

// write, send, read, recv

/// Below this many bytes a write seldom gains from zerocopy: the kernel's MSG_ZEROCOPY
/// documentation (Documentation/networking/msg_zerocopy.rst) puts the point where pinning the
/// pages and notifying the completion cost less than the copy at "around 10 KB".
constexpr std::uint64_t kZeroCopyPaysFrom = std::uint64_t{10} * 1024;

/// zerocopy on writes that are all small: a warning at the option (it runs, as asked).
void zerocopy_size_fits(ParseContext& ctx, FlowopDraft& d, const SizeSpec& size) {
  if (!d.zerocopy || size.max_bytes >= kZeroCopyPaysFrom) return;
  ctx.warning(d.given["zerocopy"],
              fmt::format("option 'zerocopy': writes of at most {} bytes seldom gain from it: "
                          "the kernel pins the pages and reports a completion for every send, "
                          "which costs more than the copy it saves below about {} KiB (the "
                          "kernel's MSG_ZEROCOPY documentation)",
                          size.max_bytes, kZeroCopyPaysFrom / 1024));
}

template <class T>
requires std::same_as<T, WriteOp> || std::same_as<T, ReadOp> std::optional<FlowopSpec> build(
    Tag<T>, ParseContext& ctx, FlowopDraft& d, std::size_t at) {
  if (!require(ctx, d, at, given(d, "size"), "size=N (bytes per call)")) return std::nullopt;
  const SizeSpec size = d.size.value_or(SizeSpec::fixed(1));
  if constexpr (std::same_as<T, WriteOp>) {
    zerocopy_size_fits(ctx, d, size);
    return WriteOp{size, d.rsize_bytes, std::nullopt, d.zerocopy};
  } else {
    return ReadOp{size, d.rsize_bytes, std::nullopt};
  }
}
// The master's rsize is how much the slave moves per call.
ReadOp mirrored(const WriteOp& s) { return {s.size, std::nullopt, s.rsize_bytes}; }
WriteOp mirrored(const ReadOp& s) { return {s.size, std::nullopt, s.rsize_bytes}; }
template <class T>
requires std::same_as<T, WriteOp> || std::same_as<T, ReadOp> std::string text(const T& s) {
  std::string out =
      fmt::format(" size={}{}{}", size_text(s.size), optional_bytes("rsize", s.rsize_bytes),
                  optional_bytes("chunk", s.chunk_bytes));
  if constexpr (std::same_as<T, WriteOp>) {
    if (s.zerocopy) out += " zerocopy";
  }
  return out;
}

// sendfile
std::optional<FlowopSpec> build(Tag<SendfileOp>, ParseContext& ctx, FlowopDraft& d,
                                std::size_t at) {
  if (d.file && d.dir) {
    ctx.error(std::max(d.given["file"], d.given["dir"]),
              "'sendfile' takes file= or dir=, not both");
    return std::nullopt;
  }
  if (!require(ctx, d, at, given(d, "file") || given(d, "dir"), "file=PATH or dir=PATH")) {
    return std::nullopt;
  }
  if (d.dir) return SendfileOp{FileSource{*d.dir, true}, chunk_of(d)};
  return SendfileOp{FileSource{d.file.value_or(""), false}, chunk_of(d)};
}
RecvFileOp mirrored(const SendfileOp& s) { return {s.source, 1}; }
std::string text(const SendfileOp& s) {
  return source_text(s.source) + optional_bytes("size", s.chunk_bytes);
}

// sendfilev
std::optional<FlowopSpec> build(Tag<SendfilevOp>, ParseContext& ctx, FlowopDraft& d,
                                std::size_t at) {
  if (!require(ctx, d, at, given(d, "dir"), "dir=PATH")) return std::nullopt;
  return SendfilevOp{FileSource{d.dir.value_or(""), true}, d.nfiles, chunk_of(d)};
}
RecvFileOp mirrored(const SendfilevOp& s) { return {s.source, s.nfiles}; }
std::string text(const SendfilevOp& s) {
  return source_text(s.source) + fmt::format(" nfiles={}", s.nfiles) +
         optional_bytes("size", s.chunk_bytes);
}

// recvfile (made by mirror() only)
std::string text(const RecvFileOp& s) {
  return source_text(s.source) + fmt::format(" nfiles={}", s.nfiles);
}

// think
std::optional<FlowopSpec> build(Tag<ThinkOp>, ParseContext& ctx, FlowopDraft& d, std::size_t at) {
  if (d.busy && d.idle) {
    ctx.error(std::max(d.given["busy"], d.given["idle"]),
              "'think' is either busy or idle, not both");
    return std::nullopt;
  }
  if (!require(ctx, d, at, given(d, "duration"), "duration=T")) return std::nullopt;
  return ThinkOp{d.duration.value_or(Nanoseconds{0}), d.busy};
}
std::string text(const ThinkOp& s) {
  return fmt::format(" duration={} {}", format_duration(s.duration), s.busy ? "busy" : "idle");
}

// nop
std::optional<FlowopSpec> build(Tag<NopOp>, ParseContext&, FlowopDraft&, std::size_t) {
  return NopOp{};
}
std::string text(const NopOp&) { return {}; }

// ---- Dispatch, and the checks that tie the blocks above to the rows.

template <class T>
constexpr bool kBuildable = requires(ParseContext& c, FlowopDraft& d, std::size_t at) {
  { build(Tag<T>{}, c, d, at) } -> std::same_as<std::optional<FlowopSpec>>;
};

template <class T>
std::optional<FlowopSpec> build_as(ParseContext& ctx, FlowopDraft& d, std::size_t at) {
  if constexpr (kBuildable<T>) {
    return build(Tag<T>{}, ctx, d, at);
  } else {
    return std::nullopt;  // a spec no written kind builds (checked below)
  }
}

using Builder = std::optional<FlowopSpec> (*)(ParseContext&, FlowopDraft&, std::size_t);

/// build_as<T> of every alternative, indexed like FlowopSpec.
constexpr auto kBuilders = []<std::size_t... I>(std::index_sequence<I...>) {
  return std::array<Builder, sizeof...(I)>{&build_as<std::variant_alternative_t<I, FlowopSpec>>...};
}
(std::make_index_sequence<std::variant_size_v<FlowopSpec>>{});

/// The spec the mirror of each spec's kinds builds (the same for all of them: checked below).
constexpr auto kMirrorSpecOf = [] {
  std::array<std::size_t, std::variant_size_v<FlowopSpec>> of{};
  for (std::size_t i = 0; i < of.size(); ++i) of[i] = traits(traits(kKindOfSpec[i]).mirror).spec;
  return of;
}();

template <class T>
constexpr std::size_t kMirrorSpec = kMirrorSpecOf[spec_index<T>];

template <class T>
constexpr bool kMirrorsItself = kMirrorSpec<T> == spec_index<T>;

/// Whether spec alternative `index` has build().
constexpr bool buildable(std::size_t index) {
  return [&]<std::size_t... I>(std::index_sequence<I...>) {
    return ((I == index && kBuildable<std::variant_alternative_t<I, FlowopSpec>>) || ...);
  }
  (std::make_index_sequence<std::variant_size_v<FlowopSpec>>{});
}

static_assert(std::ranges::all_of(kFlowopTraits,
                                  [](const FlowopTraits& row) {
                                    return !row.written || buildable(row.spec);
                                  }),
              "every kind a profile writes needs build() for its spec");
static_assert(std::ranges::all_of(kFlowopTraits,
                                  [](const FlowopTraits& row) {
                                    return traits(row.mirror).spec == kMirrorSpecOf[row.spec];
                                  }),
              "the kinds of one spec mirror to kinds of one spec (mirror_spec() is per spec)");

}  // namespace

std::optional<FlowopSpec> build_spec(ParseContext& ctx, FlowopDraft& draft,
                                     std::size_t element_offset) {
  return kBuilders[traits(draft.kind).spec](ctx, draft, element_offset);
}

FlowopSpec mirror_spec(const FlowopSpec& spec) {
  return std::visit(
      [](const auto& s) -> FlowopSpec {
        using T = std::decay_t<decltype(s)>;
        if constexpr (kMirrorsItself<T>) {
          return s;  // disconnect, think, nop: the same on both sides
        } else {
          static_assert(
              requires { mirrored(s); },
              "a spec whose kinds mirror to another spec needs mirrored()");
          static_assert(spec_index<std::decay_t<decltype(mirrored(s))>> == kMirrorSpec<T>,
                        "mirrored() must return the spec of the kind's mirror in kFlowopTraits");
          return mirrored(s);
        }
      },
      spec);
}

std::string spec_text(const FlowopSpec& spec) {
  return std::visit([](const auto& s) -> std::string { return text(s); }, spec);
}

}  // namespace volley::profile::detail
