#pragma once
// A share per source address of the connections a stranger can hold without a key: data
// connections still owing their header, control connections still owing their hello. One
// address (an IPv4 address, or an IPv6 /64, which one host usually has whole) holds at most
// `per_source`, and all of them at most `total`; a newcomer beyond either takes the place of the
// oldest connection of its own address, or of the address that holds the most. Nobody is
// refused at the door: a real peer finishes its header or hello within a round trip, long
// before it is the oldest, so a flood from one address (even the master's own), or from a few,
// only churns its own places and cannot keep a peer out.
// Thread: one (the owner's).
#include <cstddef>
#include <cstdint>
#include <map>
#include <set>
#include <string>

#include <boost/asio/ip/address.hpp>

namespace volley::transport {

class SourceQuota {
 public:
  struct Limits {
    std::size_t per_source;
    std::size_t total;
  };
  enum class Verdict {
    kAdmitted,           ///< counted, and there was room
    kReplacesOwnOldest,  ///< counted in place of `evict`, its address's oldest (per_source)
    kReplacesHeaviest,   ///< counted in place of `evict`, the oldest of the heaviest address
  };
  struct Decision {
    Verdict verdict;
    std::uint64_t evict = 0;  ///< unless kAdmitted: the connection to close (already forgotten)
  };

  explicit SourceQuota(Limits limits) : limits_(limits) {}

  /// Counts a new connection `id` (unique, increasing: older connections have smaller ids) from
  /// `source`, and says which connection, if any, it replaces.
  Decision admit(std::uint64_t id, const boost::asio::ip::address& source);
  /// The connection is gone (or no longer a stranger's); unknown ids are ignored.
  void forget(std::uint64_t id);
  [[nodiscard]] std::size_t size() const { return source_of_.size(); }
  [[nodiscard]] std::size_t held_by(const boost::asio::ip::address& source) const;
  [[nodiscard]] const Limits& limits() const { return limits_; }

  /// The key connections of one address are counted under (IPv4-mapped taken as IPv4).
  static std::string key(const boost::asio::ip::address& source);

 private:
  Limits limits_;
  std::map<std::string, std::set<std::uint64_t>> by_source_;
  std::map<std::uint64_t, std::string> source_of_;
};

}  // namespace volley::transport
