#include "service/result_cache.h"

namespace kiln::service {

std::shared_ptr<const CachedCompile> ResultCache::Find(const std::string& compile_id) {
  std::lock_guard<std::mutex> lock(mutex_);
  auto it = slots_.find(compile_id);
  if (it == slots_.end()) return nullptr;
  order_.splice(order_.begin(), order_, it->second.position);
  return it->second.entry;
}

void ResultCache::Insert(const std::string& compile_id, std::shared_ptr<const CachedCompile> entry) {
  if (entry->bytes > max_bytes_) return;
  std::lock_guard<std::mutex> lock(mutex_);
  auto it = slots_.find(compile_id);
  if (it != slots_.end()) {
    bytes_ -= it->second.entry->bytes;
    order_.erase(it->second.position);
    slots_.erase(it);
  }
  while (!order_.empty() && bytes_ + entry->bytes > max_bytes_) {
    auto victim = slots_.find(order_.back());
    bytes_ -= victim->second.entry->bytes;
    slots_.erase(victim);
    order_.pop_back();
  }
  order_.push_front(compile_id);
  bytes_ += entry->bytes;
  slots_[compile_id] = Slot{std::move(entry), order_.begin()};
}

int64_t ResultCache::bytes() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return bytes_;
}

int64_t EstimateBytes(const driver::CompileResult& result, int64_t model_bytes) {
  // Every constant the compile made (the imported module's, folded ones) was
  // charged to its budget: the peak bounds what the kept modules hold. The
  // request's own bytes, and a few hundred bytes of IR per node, come on top.
  int64_t bytes = result.peak_bytes + model_bytes + 64 * 1024;
  if (result.lowered) {
    bytes += static_cast<int64_t>(result.lowered->kernels.size()) * 16 * 1024;
  }
  if (result.native) {
    bytes += static_cast<int64_t>(result.native->object.size() + result.native->assembly.size() +
                                  result.native->llvm_ir.size() + result.native->header.size() +
                                  result.native->loop_source.size() +
                                  result.native->provenance_json.size());
  }
  return bytes;
}

}  // namespace kiln::service
