// Greedy-by-size offset assignment over live ranges.
#include "engine/lower/memory_plan.h"

#include <algorithm>
#include <numeric>
#include <utility>

namespace kiln::lower {
namespace {

int64_t RoundUp(int64_t value, int64_t alignment) {
  return (value + alignment - 1) / alignment * alignment;
}

}  // namespace

StoragePlan PlanStorage(const std::vector<StorageRequest>& requests, int64_t alignment) {
  alignment = std::max<int64_t>(alignment, 1);
  StoragePlan plan;
  plan.offsets.assign(requests.size(), 0);

  std::vector<size_t> order(requests.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    if (requests[a].elements != requests[b].elements) {
      return requests[a].elements > requests[b].elements;
    }
    return requests[a].first_step < requests[b].first_step;
  });

  // live_at[step]: the placed requests live at `step` (steps are small
  // integers: kernel calls), so finding the requests live together with the
  // one being placed costs its own live range, not the number placed.
  int last = 0;
  for (const StorageRequest& request : requests) last = std::max(last, request.last_step);
  std::vector<std::vector<size_t>> live_at(static_cast<size_t>(last) + 1);
  std::vector<size_t> seen_for(requests.size(), requests.size());  // dedupe marker
  auto size_of = [&](size_t index) {
    return RoundUp(std::max<int64_t>(requests[index].elements, 1), alignment);
  };
  for (size_t index : order) {
    const StorageRequest& request = requests[index];
    int first = std::max(request.first_step, 0);
    int end = std::max(request.last_step, first);
    // Placed requests live at the same time, as [begin, end) element ranges
    // sorted by begin: the first gap that fits wins.
    std::vector<std::pair<int64_t, int64_t>> busy;
    for (int step = first; step <= end; ++step) {
      for (size_t other : live_at[step]) {
        if (seen_for[other] == index) continue;
        seen_for[other] = index;
        busy.emplace_back(plan.offsets[other], plan.offsets[other] + size_of(other));
      }
    }
    std::sort(busy.begin(), busy.end());
    int64_t size = size_of(index);
    int64_t offset = 0;
    for (const auto& [begin, busy_end] : busy) {
      if (offset + size <= begin) break;
      offset = std::max(offset, busy_end);
    }
    plan.offsets[index] = offset;
    plan.extent = std::max(plan.extent, offset + size);
    for (int step = first; step <= end; ++step) live_at[step].push_back(index);
  }
  return plan;
}

}  // namespace kiln::lower
