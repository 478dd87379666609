// The pass traces the Explorer ran, kept so the page can fetch any pass's IR on demand (the
// live stream carries only each pass's header: a ResNet-50 trace with the IR of every pass
// would freeze a page that received it whole) and download the whole trace as NDJSON.
// Bounded in bytes across all traces: the least recently used finished traces are evicted, and
// an event that still does not fit keeps its header and loses its IR (`ir_omitted`).
#pragma once

#include <cstdint>
#include <list>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "kiln/v1/compiler.pb.h"

namespace kiln::explorer {

class TraceStore;

class Trace {
 public:
  Trace(std::string id, std::string model_id, std::string command, std::string kiln_opt_prefix,
        TraceStore* store)
      : id_(std::move(id)), model_id_(std::move(model_id)), command_(std::move(command)),
        kiln_opt_prefix_(std::move(kiln_opt_prefix)), store_(store) {}

  const std::string& id() const { return id_; }
  const std::string& model_id() const { return model_id_; }
  // The `kiln trace` command line that runs the same trace (the model as MODEL.onnx).
  const std::string& command() const { return command_; }
  // `kiln-opt MODEL.onnx` with the trace's options, for the command of each pass.
  const std::string& kiln_opt_prefix() const { return kiln_opt_prefix_; }

  // Keeps `event`, its IR dropped when the store's bound is reached. Returns what was kept.
  v1::PassEvent Add(v1::PassEvent event);
  void Finish() {
    std::lock_guard<std::mutex> lock(mutex_);
    finished_ = true;
  }
  bool finished() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return finished_;
  }
  // How many runs of the pass with index `index` (same name and stage) came up to it, counted
  // from 1: which `--print-after` dump of kiln-opt shows its IR.
  int Occurrence(int64_t index) const;
  // A copy of the events so far (in arrival order).
  std::vector<v1::PassEvent> Events() const;
  // The event with pass index `index`, and the IR after the pass of the same stage that came
  // before it (what the pass changed is the diff of the two); false when there is none.
  bool EventWithPrevious(int64_t index, v1::PassEvent* event, std::string* previous_ir,
                         std::string* previous_label) const;

 private:
  friend class TraceStore;
  const std::string id_, model_id_, command_, kiln_opt_prefix_;
  TraceStore* const store_;
  mutable std::mutex mutex_;
  std::vector<v1::PassEvent> events_;
  int64_t bytes_ = 0;
  bool finished_ = false;
};

class TraceStore {
 public:
  explicit TraceStore(int64_t max_bytes) : max_bytes_(max_bytes) {}

  std::shared_ptr<Trace> Create(const std::string& model_id, const std::string& command,
                                const std::string& kiln_opt_prefix);
  // The trace, or null when unknown or evicted.
  std::shared_ptr<Trace> Get(const std::string& id);

 private:
  friend class Trace;
  // Charges `bytes` for `owner`, evicting finished traces other than it; false when they do
  // not fit even then.
  bool Charge(const Trace* owner, int64_t bytes);

  const int64_t max_bytes_;
  std::mutex mutex_;
  int64_t next_id_ = 1;
  int64_t held_bytes_ = 0;
  std::list<std::shared_ptr<Trace>> order_;  // most recently used first
};

}  // namespace kiln::explorer
