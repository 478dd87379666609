// ObserverInstrument and the JSON form of pass events.
#include "engine/pass/pass_event.h"

#include <cmath>

#include "engine/printer/json_printer.h"
#include "nlohmann/json.hpp"

namespace kiln {
namespace {

std::chrono::nanoseconds SteadyNow() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
      std::chrono::steady_clock::now().time_since_epoch());
}

}  // namespace

const char* PassEventKindName(PassEvent::Kind kind) {
  switch (kind) {
    case PassEvent::Kind::kBefore:
      return "before";
    case PassEvent::Kind::kAfter:
      return "after";
    case PassEvent::Kind::kFailed:
      return "failed";
  }
  return "?";
}

ObserverInstrument::ObserverInstrument(PassObserver* observer, ObserverOptions options, Clock clock)
    : PassInstrument("Observer"),
      observer_(observer),
      options_(options),
      clock_(clock ? std::move(clock) : Clock(SteadyNow)) {}

PassEvent ObserverInstrument::MakeEvent(PassEvent::Kind kind, const PassInvocation& pass,
                                        const Running& running) {
  PassEvent event;
  event.kind = kind;
  event.index = running.index;
  event.stage = pass.info().stage;
  event.pass = pass.name();
  event.depth = pass.depth;
  event.is_sequential = pass.pass.is_sequential();
  return event;
}

absl::Status ObserverInstrument::RunBeforePass(const IRModule& module, const PassInvocation& pass) {
  // Indexed by depth: an entry whose after hook never came (another
  // instrument's RunBeforePass failed) is dropped by the next pass at its depth.
  running_.resize(pass.depth);
  running_.push_back(Running{next_index_++, clock_(), module});
  if (!options_.report_before) return absl::OkStatus();
  if (pass.pass.is_sequential() && !options_.include_sequential) return absl::OkStatus();
  PassEvent event = MakeEvent(PassEvent::Kind::kBefore, pass, running_.back());
  if (options_.include_ir_before) event.ir_before = module;
  observer_->OnPassEvent(event);
  return absl::OkStatus();
}

absl::Status ObserverInstrument::RunAfterPass(const IRModule& module, const PassInvocation& pass) {
  if (running_.size() <= static_cast<size_t>(pass.depth)) return absl::OkStatus();
  Running running = running_[pass.depth];
  running_.resize(pass.depth);
  if (pass.pass.is_sequential() && !options_.include_sequential) return absl::OkStatus();
  PassEvent event = MakeEvent(PassEvent::Kind::kAfter, pass, running);
  event.duration_ms = static_cast<double>((clock_() - running.start).count()) / 1e6;
  event.changed = !module.same_as(running.before);
  if (options_.include_ir_before) event.ir_before = running.before;
  if (options_.include_ir_after) event.ir_after = module;
  if (options_.include_span_stats) event.spans = CountSpans(module);
  observer_->OnPassEvent(event);
  return absl::OkStatus();
}

void ObserverInstrument::RunAfterBackendPass(const BackendPassRun& run) {
  PassEvent event;
  event.kind = PassEvent::Kind::kAfter;
  event.index = next_index_++;
  event.stage = run.stage;
  event.pass = run.name;
  event.depth = run.depth;
  event.duration_ms = run.duration_ms;
  event.changed = run.changed;
  if (options_.include_ir_after && run.ir_after) event.backend_ir_after = run.ir_after();
  observer_->OnPassEvent(event);
}

absl::Status ObserverInstrument::RunAfterPassFailed(const IRModule& module_before,
                                                    const PassInvocation& pass,
                                                    const absl::Status& error) {
  if (running_.size() <= static_cast<size_t>(pass.depth)) return absl::OkStatus();
  Running running = running_[pass.depth];
  running_.resize(pass.depth);
  if (pass.pass.is_sequential() && !options_.include_sequential) return absl::OkStatus();
  PassEvent event = MakeEvent(PassEvent::Kind::kFailed, pass, running);
  event.duration_ms = static_cast<double>((clock_() - running.start).count()) / 1e6;
  event.error = std::string(error.message());
  if (options_.include_ir_before) event.ir_before = module_before;
  observer_->OnPassEvent(event);
  return absl::OkStatus();
}

std::string PassEventToJson(const PassEvent& event, bool include_duration) {
  nlohmann::ordered_json json;
  json["index"] = event.index;
  json["event"] = PassEventKindName(event.kind);
  json["pass"] = event.pass;
  json["stage"] = PassStageName(event.stage);
  json["depth"] = event.depth;
  if (event.kind != PassEvent::Kind::kBefore) {
    // Rounded to microseconds: enough for pass timings, and short.
    if (include_duration) json["duration_ms"] = std::round(event.duration_ms * 1000.0) / 1000.0;
  }
  if (event.kind == PassEvent::Kind::kAfter) json["changed"] = event.changed;
  if (event.kind == PassEvent::Kind::kFailed) json["error"] = event.error;
  if (event.spans) {
    json["spans"] = {{"calls", event.spans->calls},
                     {"calls_with_span", event.spans->calls_with_span},
                     {"nodes", event.spans->nodes},
                     {"nodes_with_span", event.spans->nodes_with_span}};
  }
  // "ir" is the module this event is about: the input for before and failed
  // events, the output for after events.
  const IRModule& ir = event.kind == PassEvent::Kind::kAfter ? event.ir_after : event.ir_before;
  if (ir) json["ir"] = nlohmann::ordered_json::parse(PrintModuleJson(ir, -1));
  if (!event.backend_ir_after.empty()) json["backend_ir"] = event.backend_ir_after;
  if (event.kind == PassEvent::Kind::kAfter && event.ir_before) {
    json["ir_before"] = nlohmann::ordered_json::parse(PrintModuleJson(event.ir_before, -1));
  }
  return json.dump();
}

}  // namespace kiln
