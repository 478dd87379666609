// DriftPrinter: the numerics check's lines on kiln-opt's stderr.
#include "tools/kiln-opt/drift_printer.h"

#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"

namespace kiln::tools {
namespace {

constexpr double kRtol = 1e-5, kAtol = 1e-6;

std::string Line(const absl::StatusOr<driver::DriftReport>& report) {
  if (!report.ok()) return absl::StrCat("not checked: ", report.status().message());
  return absl::StrFormat("max rel %.3g, max abs %.3g (%s)", report->max_rel_error,
                         report->max_abs_error, report->backend);
}

}  // namespace

void DriftPrinter::OnPassEvent(const PassEvent& event) {
  if (event.kind != PassEvent::Kind::kAfter || event.stage != PassStage::kGraph) return;
  absl::StatusOr<driver::DriftReport> report = tracker_.AfterGraphPass(event);
  out_ << "kiln-opt: numerics after #" << event.index << " " << event.pass << ": " << Line(report)
       << "\n";
  if (!report.ok() || attributed_) return;
  bool over = false;
  for (const driver::OutputDrift& output : report->outputs) {
    over |= output.max_rel_error > kRtol && output.max_abs_error > kAtol;
  }
  if (!over) return;
  attributed_ = true;
  absl::StatusOr<std::vector<driver::LayerDrift>> layers = tracker_.Attribute(event, kRtol, kAtol);
  if (!layers.ok()) {
    out_ << "kiln-opt:   layers not compared: " << layers.status().message() << "\n";
    return;
  }
  for (const driver::LayerDrift& layer : *layers) {
    out_ << absl::StrFormat("kiln-opt:   layer %s: max rel %.3g, max abs %.3g\n",
                            absl::StrJoin(layer.layers, ", "), layer.max_rel_error,
                            layer.max_abs_error);
  }
}

void DriftPrinter::PrintNative(const driver::CompileResult& compiled) {
  if (!compiled.native.has_value()) return;
  out_ << "kiln-opt: numerics of the native code: " << Line(tracker_.AfterNative(compiled)) << "\n";
}

}  // namespace kiln::tools
