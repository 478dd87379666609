// The models the Explorer's users uploaded (or picked from the examples), held in memory so
// that traces, schedule records and artifact downloads of the same model need no new upload.
// Bounded in bytes: a new model evicts the least recently used ones, and a model larger than
// the whole bound is refused before any byte of it is kept.
#pragma once

#include <cstdint>
#include <list>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>

#include "absl/status/statusor.h"

namespace kiln::explorer {

struct StoredModel {
  std::string id;    // "m1", "m2", ...: what the page sends back
  std::string name;  // the file name the user gave (shown, never used as a path)
  std::string bytes;
};

class ModelStore {
 public:
  explicit ModelStore(int64_t max_bytes) : max_bytes_(max_bytes) {}

  // Keeps `bytes` under a new id. RESOURCE_EXHAUSTED when they exceed the store's bound.
  absl::StatusOr<std::shared_ptr<const StoredModel>> Put(std::string name, std::string bytes);
  // The model, or null when the id is unknown or was evicted.
  std::shared_ptr<const StoredModel> Get(const std::string& id);

  int64_t max_bytes() const { return max_bytes_; }

 private:
  const int64_t max_bytes_;
  std::mutex mutex_;
  int64_t next_id_ = 1;
  int64_t held_bytes_ = 0;
  // Most recently used first; the map points into the list.
  std::list<std::shared_ptr<const StoredModel>> order_;
  std::unordered_map<std::string, std::list<std::shared_ptr<const StoredModel>>::iterator> by_id_;
};

}  // namespace kiln::explorer
