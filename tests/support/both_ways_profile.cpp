#include "support/both_ways_profile.hpp"

#include <fmt/format.h>

namespace volley::test {

std::string both_ways_profile(const std::string& host, const std::string& protocol,
                              const std::string& duration) {
  return fmt::format(R"XML(<?xml version="1.0"?>
<profile name="both ways">
  <group nthreads="2" name="out">
    <transaction iterations="1"><flowop type="connect" options="remotehost={0} protocol={1}"/></transaction>
    <transaction duration="{2}">
      <flowop type="write" options="size=64"/>
      <flowop type="read" options="size=64"/>
    </transaction>
    <transaction iterations="1"><flowop type="disconnect"/></transaction>
  </group>
  <group nthreads="3" name="in">
    <transaction iterations="1"><flowop type="accept" options="remotehost={0} protocol={1} conn=2"/></transaction>
    <transaction duration="{2}">
      <flowop type="write" options="size=1k conn=2"/>
      <flowop type="read" options="size=32 conn=2"/>
    </transaction>
    <transaction iterations="1"><flowop type="disconnect" options="conn=2"/></transaction>
  </group>
</profile>
)XML",
                     host, protocol, duration);
}

}  // namespace volley::test
