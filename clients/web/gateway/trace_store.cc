// TraceStore: pass events of the Explorer's traces, bounded in bytes.
#include "clients/web/gateway/trace_store.h"

#include <algorithm>

#include "absl/strings/str_cat.h"

namespace kiln::explorer {

v1::PassEvent Trace::Add(v1::PassEvent event) {
  event.clear_summary();  // the summary's pass timings repeat the events
  int64_t size = static_cast<int64_t>(event.ByteSizeLong());
  bool charged = store_->Charge(this, size);
  if (!charged) {
    event.clear_ir_before();
    event.clear_ir_after();
    event.clear_span_table();
    event.set_ir_omitted(true);
    size = static_cast<int64_t>(event.ByteSizeLong());
    // A header is a few dozen bytes, and a trace has one per pass: kept even when uncharged.
    charged = store_->Charge(this, size);
  }
  std::lock_guard<std::mutex> lock(mutex_);
  if (charged) bytes_ += size;
  events_.push_back(event);
  return event;
}

int Trace::Occurrence(int64_t index) const {
  std::lock_guard<std::mutex> lock(mutex_);
  auto found = std::find_if(events_.begin(), events_.end(),
                            [&](const v1::PassEvent& e) { return e.index() == index; });
  if (found == events_.end()) return 0;
  int occurrence = 0;
  for (const v1::PassEvent& event : events_) {
    if (event.pass_name() == found->pass_name() && event.stage() == found->stage() &&
        event.index() <= index) {
      ++occurrence;
    }
  }
  return occurrence;
}

std::vector<v1::PassEvent> Trace::Events() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return events_;
}

bool Trace::EventWithPrevious(int64_t index, v1::PassEvent* event, std::string* previous_ir,
                              std::string* previous_label) const {
  std::lock_guard<std::mutex> lock(mutex_);
  auto found = std::find_if(events_.begin(), events_.end(),
                            [&](const v1::PassEvent& e) { return e.index() == index; });
  if (found == events_.end()) return false;
  *event = *found;
  previous_ir->clear();
  previous_label->clear();
  // Events arrive as passes finish (a container after the passes nested in it), so "before"
  // is the last event of the same stage that arrived earlier and has IR.
  for (auto it = found; it != events_.begin();) {
    --it;
    if (it->stage() == found->stage() && !it->ir_after().empty()) {
      *previous_ir = it->ir_after();
      *previous_label = absl::StrCat("after #", it->index(), " ", it->pass_name());
      break;
    }
  }
  return true;
}

std::shared_ptr<Trace> TraceStore::Create(const std::string& model_id, const std::string& command,
                                          const std::string& kiln_opt_prefix) {
  std::lock_guard<std::mutex> lock(mutex_);
  auto trace = std::make_shared<Trace>(absl::StrCat("t", next_id_++), model_id, command,
                                       kiln_opt_prefix, this);
  order_.push_front(trace);
  return trace;
}

std::shared_ptr<Trace> TraceStore::Get(const std::string& id) {
  std::lock_guard<std::mutex> lock(mutex_);
  for (auto it = order_.begin(); it != order_.end(); ++it) {
    if ((*it)->id() == id) {
      order_.splice(order_.begin(), order_, it);
      return order_.front();
    }
  }
  return nullptr;
}

bool TraceStore::Charge(const Trace* owner, int64_t bytes) {
  std::lock_guard<std::mutex> lock(mutex_);
  // Oldest first, finished traces other than the owner make room.
  for (auto it = order_.end(); held_bytes_ + bytes > max_bytes_ && it != order_.begin();) {
    --it;
    if (it->get() == owner || !(*it)->finished()) continue;
    int64_t freed;
    {
      std::lock_guard<std::mutex> trace_lock((*it)->mutex_);
      freed = (*it)->bytes_;
    }
    held_bytes_ -= freed;
    it = order_.erase(it);
  }
  if (held_bytes_ + bytes > max_bytes_) return false;
  held_bytes_ += bytes;
  return true;
}

}  // namespace kiln::explorer
