// The debugging instruments, in the one order every consumer gets.
#include "engine/driver/debug_instruments.h"

#include <utility>

#include "engine/op/type_inference.h"
#include "engine/pass/configured_instruments.h"
#include "engine/pass/crash_reproducer.h"
#include "engine/pass/pass_config.h"
#include "engine/pass/pass_event.h"
#include "engine/pass/pass_timing.h"

namespace kiln::driver {
namespace {

// Dumps as JSON pass events, one per line, selected by the same filter as
// the text dumps.
class JsonEventWriter final : public PassObserver {
 public:
  JsonEventWriter(PrintIRFilter filter, std::ostream* out)
      : filter_(std::move(filter)), out_(out) {}

  void OnPassEvent(const PassEvent& event) override {
    bool print = false;
    switch (event.kind) {
      case PassEvent::Kind::kBefore:
        print = filter_.PrintBefore(event.pass, event.is_sequential);
        break;
      case PassEvent::Kind::kAfter:
        print = filter_.PrintAfter(event.pass, event.is_sequential, event.changed);
        break;
      case PassEvent::Kind::kFailed:
        print = !event.is_sequential;
        break;
    }
    if (print) *out_ << PassEventToJson(event) << "\n";
  }

 private:
  PrintIRFilter filter_;
  std::ostream* out_;
};

}  // namespace

struct DebugInstruments::State {
  TimePasses time_passes = TimePasses::kOff;
  std::shared_ptr<PassTiming> timing;
  std::unique_ptr<JsonEventWriter> json_writer;  // outlives the context's use of it
  ConfiguredInstruments configured;
  std::shared_ptr<CrashReproducer> reproducer;
};

absl::StatusOr<DebugInstruments> DebugInstruments::Add(
    const DebugOptions& options, const std::vector<std::shared_ptr<PassInstrument>>& instruments,
    const std::string& pipeline, PassContext& context) {
  DebugInstruments added;
  added.state_ = std::make_shared<State>();
  State& state = *added.state_;
  state.time_passes = options.time_passes;
  if (options.time_passes != TimePasses::kOff) {
    state.timing = std::make_shared<PassTiming>();
    context.AddInstrument(state.timing);
  }
  if (!options.print_ir.empty() && options.out != nullptr) {
    if (options.dump_json) {
      state.json_writer = std::make_unique<JsonEventWriter>(options.print_ir, options.out);
      ObserverOptions observer;
      observer.report_before = options.print_ir.before_all || !options.print_ir.before.empty();
      observer.include_ir_before = observer.report_before;
      observer.include_ir_after = true;
      context.AddInstrument(
          std::make_shared<ObserverInstrument>(state.json_writer.get(), observer));
    } else {
      context.AddInstrument(
          std::make_shared<PrintIR>(options.print_ir, options.out, options.print_options));
    }
  }
  for (const auto& instrument : instruments) context.AddInstrument(instrument);
  absl::StatusOr<ConfiguredInstruments> configured = AddConfiguredInstruments(
      context, options.out, [](const IRModule& module) { return InferType(module); });
  if (!configured.ok()) return configured.status();
  state.configured = *std::move(configured);
  if (!options.reproducer_dir.empty()) {
    CrashReproducerOptions reproducer;
    reproducer.directory = options.reproducer_dir;
    reproducer.context_flags = ContextFlags(context);
    reproducer.full_pipeline = pipeline;
    state.reproducer = std::make_shared<CrashReproducer>(reproducer);
    context.AddInstrument(state.reproducer);
  }
  return added;
}

CompileReport DebugInstruments::Report(const PassContext& context) const {
  CompileReport report;
  report.diagnostics = context.diagnostics();
  if (state_ == nullptr) return report;
  if (state_->timing) {
    report.timing = state_->time_passes == TimePasses::kList ? state_->timing->RenderList()
                                                             : state_->timing->RenderTree();
  }
  if (state_->configured.span_coverage &&
      context.GetConfig<std::string>(kConfigSpanCoverage) == "report") {
    report.span_coverage = state_->configured.span_coverage->Render();
  }
  if (state_->reproducer) report.reproducers = state_->reproducer->written();
  return report;
}

}  // namespace kiln::driver
