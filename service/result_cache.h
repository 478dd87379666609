// Finished compiles kept in process by compile id, bounded by an estimate of
// their bytes and evicted least recently used first, so GetScheduleRecord or
// Compile right after a TracePass of the same model does not compile again.
// A miss is never wrong: the compile is deterministic, so it is redone.
#pragma once

#include <cstdint>
#include <list>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "engine/driver/driver.h"
#include "kiln/v1/compiler.pb.h"

namespace kiln::service {

struct CachedCompile {
  driver::CompileResult result;
  std::vector<v1::PassTiming> pass_timings;
  int64_t bytes = 0;  // the estimate the cache counts
};

class ResultCache {
 public:
  explicit ResultCache(int64_t max_bytes) : max_bytes_(max_bytes) {}

  // Null on a miss.
  std::shared_ptr<const CachedCompile> Find(const std::string& compile_id);
  // Keeps `entry` unless it alone exceeds the bound.
  void Insert(const std::string& compile_id, std::shared_ptr<const CachedCompile> entry);

  int64_t bytes() const;

 private:
  using Order = std::list<std::string>;  // most recently used first
  struct Slot {
    std::shared_ptr<const CachedCompile> entry;
    Order::iterator position;
  };

  const int64_t max_bytes_;
  mutable std::mutex mutex_;
  Order order_;
  std::unordered_map<std::string, Slot> slots_;  // looked up, never iterated
  int64_t bytes_ = 0;
};

// Bytes an entry holds, roughly: every tensor the compile materialized (its
// budget's peak: imported and folded constants), the request's bytes, and an
// allowance per kernel for the IR.
int64_t EstimateBytes(const driver::CompileResult& result, int64_t model_bytes);

}  // namespace kiln::service
