// ModelStore: an LRU of uploaded models bounded in bytes.
#include "clients/web/gateway/model_store.h"

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"

namespace kiln::explorer {

absl::StatusOr<std::shared_ptr<const StoredModel>> ModelStore::Put(std::string name,
                                                                   std::string bytes) {
  const int64_t size = static_cast<int64_t>(bytes.size());
  if (size > max_bytes_) {
    return absl::ResourceExhaustedError(absl::StrCat("the model is ", size,
                                                     " bytes; the gateway keeps at most ",
                                                     max_bytes_, " bytes of models"));
  }
  std::lock_guard<std::mutex> lock(mutex_);
  while (held_bytes_ + size > max_bytes_ && !order_.empty()) {
    held_bytes_ -= static_cast<int64_t>(order_.back()->bytes.size());
    by_id_.erase(order_.back()->id);
    order_.pop_back();
  }
  auto model = std::make_shared<StoredModel>(
      StoredModel{absl::StrCat("m", next_id_++), std::move(name), std::move(bytes)});
  order_.push_front(model);
  by_id_[model->id] = order_.begin();
  held_bytes_ += size;
  return std::shared_ptr<const StoredModel>(model);
}

std::shared_ptr<const StoredModel> ModelStore::Get(const std::string& id) {
  std::lock_guard<std::mutex> lock(mutex_);
  auto it = by_id_.find(id);
  if (it == by_id_.end()) return nullptr;
  order_.splice(order_.begin(), order_, it->second);
  return *it->second;
}

}  // namespace kiln::explorer
