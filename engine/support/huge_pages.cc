#include "engine/support/huge_pages.h"

#include <cstdint>

#if defined(__linux__)
#include <sys/mman.h>
#endif

namespace kiln {

namespace {
constexpr uintptr_t kHugePage = uintptr_t{2} << 20;
}  // namespace

void AdviseHugePages(const void* data, size_t bytes) {
#if defined(MADV_HUGEPAGE)
  uintptr_t begin = (reinterpret_cast<uintptr_t>(data) + kHugePage - 1) & ~(kHugePage - 1);
  uintptr_t end = (reinterpret_cast<uintptr_t>(data) + bytes) & ~(kHugePage - 1);
  if (begin < end) madvise(reinterpret_cast<void*>(begin), end - begin, MADV_HUGEPAGE);
#else
  (void)data;
  (void)bytes;
#endif
}

std::string ZeroedBytes(size_t bytes) {
  std::string out;
  out.reserve(bytes);  // allocated, not yet touched
  AdviseHugePages(out.data(), bytes);
  out.resize(bytes);
  return out;
}

}  // namespace kiln
