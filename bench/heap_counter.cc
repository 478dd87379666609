// Global operator new/delete that count heap bytes for the benchmarks.
#include "bench/heap_counter.h"

#include <malloc.h>

#include <atomic>
#include <cstdlib>
#include <new>

namespace {
std::atomic<int64_t> g_heap_bytes{0};
std::atomic<int64_t> g_heap_peak{0};
}  // namespace

void* operator new(size_t size) {
  void* p = std::malloc(size == 0 ? 1 : size);
  if (p == nullptr) throw std::bad_alloc();
  int64_t usable = static_cast<int64_t>(malloc_usable_size(p));
  int64_t now = g_heap_bytes.fetch_add(usable, std::memory_order_relaxed) + usable;
  int64_t peak = g_heap_peak.load(std::memory_order_relaxed);
  while (now > peak && !g_heap_peak.compare_exchange_weak(peak, now)) {
  }
  return p;
}

void operator delete(void* p) noexcept {
  if (p == nullptr) return;
  g_heap_bytes.fetch_sub(static_cast<int64_t>(malloc_usable_size(p)), std::memory_order_relaxed);
  std::free(p);
}

void operator delete(void* p, size_t) noexcept { operator delete(p); }

namespace kiln::bench {

int64_t HeapBytes() { return g_heap_bytes.load(); }
void ResetHeapPeak() { g_heap_peak.store(g_heap_bytes.load()); }
int64_t HeapPeakBytes() { return g_heap_peak.load(); }

}  // namespace kiln::bench
