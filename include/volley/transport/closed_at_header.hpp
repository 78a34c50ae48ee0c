#pragma once
// Whether a data connection this side opened was closed by its peer before anything but the
// connection header passed on it. The accepting side closes a connection whose header did not
// arrive within its deadline (volley serve --header-timeout) or that it refused; the opening side
// then sees only "Broken pipe", a reset or an end of file on its next read or write, which says
// nothing of why. The kernel's counts tell this case apart from a connection that carried data.
namespace volley::transport {

/// From TCP_INFO on socket `fd`: the peer sent no data and acknowledged at most the header.
/// False when the counts cannot be read.
bool closed_at_header(int fd);

}  // namespace volley::transport
