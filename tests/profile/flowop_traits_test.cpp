// The flowop rows (volley/profile/flowop_traits.hpp): every kind has one, and the parser, the
// mirror and the printer follow them.
#include "volley/profile/flowop_traits.hpp"

#include <gtest/gtest.h>

#include <fmt/format.h>

#include <map>
#include <set>
#include <string>
#include <utility>

#include "profile/test_profiles.hpp"
#include "volley/profile/mirror.hpp"
#include "volley/profile/printer.hpp"

namespace volley::profile {
namespace {

/// Options that make a flowop of each written kind valid. A kind added without one fails
/// EveryWrittenKindParsesIntoItsSpec: add it here.
const std::map<std::string, std::string, std::less<>> kValidOptions{
    {"connect", "remotehost=$h protocol=tcp"},
    {"accept", "remotehost=$h protocol=tcp"},
    {"disconnect", ""},
    {"write", "size=64"},
    {"send", "size=64"},
    {"read", "size=64"},
    {"recv", "size=64"},
    {"sendfile", "file=/f"},
    {"sendfilev", "dir=/d"},
    {"think", "duration=1ms"},
    {"nop", ""},
};

/// A value each option accepts (flags have none).
const std::map<std::string, std::string, std::less<>> kOptionValues{
    {"remotehost", "=h"},
    {"protocol", "=tcp"},
    {"port", "=7000"},
    {"wndsz", "=64k"},
    {"tcp_nodelay", ""},
    {"cc", "=cubic"},
    {"srcaddr", "=10.0.0.1"},
    {"timeout", "=1s"},
    {"size", "=64"},
    {"rsize", "=32"},
    {"dir", "=/d"},
    {"file", "=/f"},
    {"nfiles", "=2"},
    {"duration", "=1ms"},
    {"busy", ""},
    {"idle", ""},
    {"tls_version", "=1.3"},
    {"cipher", "=TLS_AES_128_GCM_SHA256"},
    {"resume", ""},
    {"ktls", "=try"},
    {"gso", ""},
    {"engine", "=e"},
    {"zerocopy", ""},
};

std::string flowop_profile(std::string_view type, std::string_view options) {
  return fmt::format(
      "<profile name=\"p\"><group nthreads=\"1\"><transaction iterations=\"1\">"
      "<flowop type=\"connect\" options=\"remotehost=$h protocol=tcp\"/>"
      "<flowop type=\"{}\" options=\"{}\"/></transaction></group></profile>",
      type, options);
}

bool lists(std::string_view list, std::string_view name) {
  while (!list.empty()) {
    const std::size_t space = list.find(' ');
    if (list.substr(0, space) == name) return true;
    list = space == std::string_view::npos ? std::string_view() : list.substr(space + 1);
  }
  return false;
}

TEST(FlowopTraits, EveryKindHasItsRowInOrder) {
  std::set<std::string_view> names;
  for (std::size_t i = 0; i < kFlowopKinds; ++i) {
    const auto kind = static_cast<FlowopKind>(i);
    const FlowopTraits& row = traits(kind);
    EXPECT_EQ(row.kind, kind) << "row " << i << " is out of enum order";
    EXPECT_FALSE(row.name.empty()) << "kind " << i << " has no row";
    EXPECT_TRUE(names.insert(row.name).second) << row.name << " has two rows";
    EXPECT_LT(row.spec, std::variant_size_v<FlowopSpec>) << row.name;
    EXPECT_LT(static_cast<std::size_t>(row.mirror), kFlowopKinds) << row.name;
  }
}

TEST(FlowopTraits, EverySpecHasAKindOfItsOwn) {
  [&]<std::size_t... I>(std::index_sequence<I...>) {
    (
        [&] {
          const FlowopSpec spec{std::in_place_index<I>};
          EXPECT_EQ(traits(spec).spec, I) << "FlowopSpec alternative " << I << " has no row";
          EXPECT_EQ(traits(traits(spec).kind).spec, I);
        }(),
        ...);
  }
  (std::make_index_sequence<std::variant_size_v<FlowopSpec>>{});
}

TEST(FlowopTraits, EveryWrittenKindParsesIntoItsSpec) {
  for (const FlowopTraits& row : kFlowopTraits) {
    if (!row.written) continue;
    const auto valid = kValidOptions.find(row.name);
    ASSERT_NE(valid, kValidOptions.end()) << "kValidOptions has no entry for '" << row.name << "'";
    const Profile p = testing::parse_ok(flowop_profile(row.name, valid->second));
    ASSERT_EQ(p.groups.size(), 1U) << row.name;
    const Flowop& op = p.groups[0].transactions[0].flowops.at(1);
    EXPECT_EQ(op.type, row.name);
    EXPECT_EQ(op.spec.index(), row.spec) << row.name;
    EXPECT_EQ(kind_of(op), row.kind);
    EXPECT_NE(to_text(p).find(fmt::format("      {}", row.name)), std::string::npos) << row.name;
    // The slave runs the row's mirror.
    const Profile mirrored = mirror(p, "");
    const Flowop& peer = mirrored.groups[0].transactions[0].flowops.at(1);
    EXPECT_EQ(peer.type, traits(row.mirror).name) << row.name;
    EXPECT_EQ(peer.spec.index(), traits(row.mirror).spec) << row.name;
    EXPECT_EQ(peer.common, op.common) << row.name;
  }
}

TEST(FlowopTraits, KindsNotWrittenAreUnknownToProfiles) {
  for (const FlowopTraits& row : kFlowopTraits) {
    if (row.written) continue;
    EXPECT_NE(testing::diagnostics_of(flowop_profile(row.name, ""))
                  .find(fmt::format("unknown flowop type '{}'", row.name)),
              std::string::npos)
        << row.name;
  }
}

TEST(FlowopTraits, AKindTakesTheOptionsItsRowNamesAndWarnsAboutTheOthers) {
  for (const FlowopTraits& row : kFlowopTraits) {
    for (std::string_view list = row.options; !list.empty();) {
      const std::size_t space = list.find(' ');
      EXPECT_TRUE(kOptionValues.contains(list.substr(0, space)))
          << "kOptionValues has no value for '" << list.substr(0, space) << "'";
      list = space == std::string_view::npos ? std::string_view() : list.substr(space + 1);
    }
    if (!row.written) continue;
    for (const auto& [option, value] : kOptionValues) {
      const std::string text =
          testing::diagnostics_of(flowop_profile(row.name, fmt::format("{}{}", option, value)));
      // Ignored with a warning, or (an option that asks for another test: zerocopy) refused.
      const bool ignored =
          text.find("does not apply") != std::string::npos ||
          text.find(fmt::format("option '{}' applies to", option)) != std::string::npos;
      EXPECT_EQ(ignored, !lists(row.options, option)) << row.name << " " << option << ": " << text;
    }
  }
}

TEST(FlowopTraits, MirrorsPairOpenersAndDataDirections) {
  for (const FlowopTraits& row : kFlowopTraits) {
    if (!row.written) continue;
    const FlowopTraits& peer = traits(row.mirror);
    if (opens(row.connection)) {
      EXPECT_TRUE(opens(peer.connection)) << row.name;
      EXPECT_NE(peer.connection, row.connection) << row.name << ": one side dials, one accepts";
    } else {
      EXPECT_EQ(peer.connection, row.connection) << row.name;
    }
    if (row.data == Data::kSends) {
      EXPECT_EQ(peer.data, Data::kReceives) << row.name;
    }
    if (row.data == Data::kReceives) {
      EXPECT_EQ(peer.data, Data::kSends) << row.name;
    }
    if (peer.written) {
      EXPECT_EQ(traits(peer.mirror).kind, row.kind) << row.name << ": a mirror mirrors back";
    }
  }
}

}  // namespace
}  // namespace volley::profile
