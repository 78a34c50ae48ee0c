#include "support/paced_profile.hpp"

#include <fmt/format.h>

namespace volley::test {

std::string paced_think_profile(const std::string& strands, const std::string& host,
                                const std::string& duration, const std::string& think) {
  return fmt::format(R"XML(<?xml version="1.0"?>
<profile name="paced think">
  <group nthreads="{}">
    <transaction iterations="1"><flowop type="connect" options="remotehost={} protocol=tcp"/></transaction>
    <transaction duration="{}" rate="$r">
      <flowop type="write" options="size=64"/>
      <flowop type="read" options="size=64"/>
      <flowop type="think" options="duration={}"/>
    </transaction>
    <transaction iterations="1"><flowop type="disconnect"/></transaction>
  </group>
</profile>
)XML",
                     strands, host, duration, think);
}

}  // namespace volley::test
