#pragma once
// The slave's view of a master's profile: every master flowop replaced by its opposite, so that a
// master's write is the slave's read and a master's connect is the slave's accept.
#include <string_view>

#include "volley/profile/model.hpp"

namespace volley::profile {

/// Returns the profile the slave serving `host` runs. `host` is a remotehost value as written in
/// the profile (after variable expansion); an empty `host` mirrors every connection.
///
/// Rules: connect<->accept, write/send -> read of the same SizeSpec (the master's rsize becomes
/// the slave's chunk_bytes), read/recv -> write likewise, sendfile/sendfilev -> RecvFileOp of the
/// same source, disconnect, think and nop unchanged. Flowops on connections opened to another
/// host are dropped; a group none of whose connections go to `host` keeps its place (indices stay
/// aligned with the master's) but gets nthreads = 0. Group, transaction and flowop order, names,
/// `count`, `conn`, `canfail`, `timeout` and transaction bounds are kept.
Profile mirror(const Profile& master, std::string_view host);

}  // namespace volley::profile
