// Heap accounting for benchmarks: linking heap_counter.cc replaces global
// operator new/delete with versions that count the bytes malloc really
// reserves (malloc_usable_size), current and peak.
#pragma once

#include <cstdint>

namespace kiln::bench {

int64_t HeapBytes();
// Restarts peak tracking from the current usage.
void ResetHeapPeak();
int64_t HeapPeakBytes();

}  // namespace kiln::bench
