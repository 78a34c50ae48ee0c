#include "volley/sampling/resident_memory.hpp"

#include <malloc.h>
#include <unistd.h>

#include <fstream>

namespace volley::sampling {

std::int64_t resident_bytes() {
  // Free heap pages go back to the kernel first: what is left is what the process holds, not
  // what the allocator keeps cached (a burst of accepts frees thousands of header reads at once).
  ::malloc_trim(0);
  std::ifstream statm("/proc/self/statm");
  std::int64_t size = 0;
  std::int64_t resident = 0;
  if (!(statm >> size >> resident)) return 0;
  return resident * static_cast<std::int64_t>(::sysconf(_SC_PAGESIZE));
}

}  // namespace volley::sampling
