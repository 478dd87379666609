// Static memory planning for the values passed between kernels: each value
// asks for a block of elements live over a range of kernel steps, and blocks
// whose live ranges do not overlap may share memory. The result is one
// offset per value into a single workspace whose size is known at compile time.
#pragma once

#include <cstdint>
#include <vector>

namespace kiln::lower {

// One value between kernels: `elements` of one dtype, written by the kernel at
// step `first_step` and last read by the kernel at step `last_step` (equal when
// nothing reads it). A kernel's inputs and outputs never share memory, so two
// values conflict when their closed step ranges intersect.
struct StorageRequest {
  int64_t elements = 0;
  int first_step = 0;
  int last_step = 0;
};

struct StoragePlan {
  std::vector<int64_t> offsets;  // one per request, in elements
  int64_t extent = 0;            // elements the workspace must hold
};

// Greedy by size: requests are placed largest first (ties: earlier first step,
// then request order), each at the lowest offset, a multiple of `alignment`
// elements, that overlaps no already placed request live at the same time.
// Deterministic; never larger than placing every request side by side.
StoragePlan PlanStorage(const std::vector<StorageRequest>& requests, int64_t alignment);

}  // namespace kiln::lower
