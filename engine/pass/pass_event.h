// Pass events: the one interface every consumer of pass progress reads
// (ARCHITECTURE.md: Prometheus metrics, the CLI's progress and IR dumps, the
// TracePass stream). ObserverInstrument turns instrument hooks into events,
// so a consumer implements PassObserver and never touches instruments.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "engine/ir/module.h"
#include "engine/pass/instrument.h"
#include "engine/pass/pass.h"
#include "engine/pass/span_coverage.h"

namespace kiln {

struct PassEvent {
  enum class Kind { kBefore, kAfter, kFailed };
  Kind kind = Kind::kAfter;
  // The pass's number among those run under the observer (0, 1, ...), shared
  // by its before and after events.
  int64_t index = 0;
  PassStage stage = PassStage::kGraph;
  std::string pass;
  int depth = 0;
  bool is_sequential = false;
  // After and failed events: wall time of the pass.
  double duration_ms = 0;
  // After events: the module is not `same_as` the input.
  bool changed = false;
  // Failed events: the pass's error.
  std::string error;
  // Only when the observer asked for them (ObserverOptions).
  IRModule ir_before;
  IRModule ir_after;
  std::optional<SpanStats> spans;
  // A backend pass's IR after it, as the backend's text (LLVM IR), when asked for.
  std::string backend_ir_after;
};
const char* PassEventKindName(PassEvent::Kind kind);

class PassObserver {
 public:
  virtual ~PassObserver() = default;
  virtual void OnPassEvent(const PassEvent& event) = 0;
};

struct ObserverOptions {
  // Before events are reported only when asked (most consumers need after).
  bool report_before = false;
  // Attach the IR to events: before events and failed events get ir_before,
  // after events ir_after (and ir_before when include_ir_before is set too).
  bool include_ir_before = false;
  bool include_ir_after = false;
  // Count spans after each pass (a walk of the module per pass).
  bool include_span_stats = false;
  // Report Sequential containers too (their events bracket their children's).
  bool include_sequential = true;
};

// Adapts instrument hooks to PassObserver events. `observer` must outlive it.
class ObserverInstrument final : public PassInstrument {
 public:
  using Clock = std::function<std::chrono::nanoseconds()>;
  ObserverInstrument(PassObserver* observer, ObserverOptions options = {}, Clock clock = nullptr);

  absl::Status RunBeforePass(const IRModule& module, const PassInvocation& pass) override;
  absl::Status RunAfterPass(const IRModule& module, const PassInvocation& pass) override;
  absl::Status RunAfterPassFailed(const IRModule& module_before, const PassInvocation& pass,
                                  const absl::Status& error) override;
  void RunAfterBackendPass(const BackendPassRun& run) override;

 private:
  struct Running {
    int64_t index;
    std::chrono::nanoseconds start;
    IRModule before;
  };
  PassEvent MakeEvent(PassEvent::Kind kind, const PassInvocation& pass, const Running& running);

  PassObserver* observer_;
  ObserverOptions options_;
  Clock clock_;
  int64_t next_index_ = 0;
  std::vector<Running> running_;
};

// One line of JSON: {"index","event","pass","stage","depth","duration_ms","changed",...,
// "ir": <PrintModuleJson form>}. Deterministic except for durations (tests
// pass `include_duration = false`).
std::string PassEventToJson(const PassEvent& event, bool include_duration = true);

}  // namespace kiln
