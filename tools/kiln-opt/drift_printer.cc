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

DriftPrinter::DriftPrinter(uint64_t seed, driver::CompileOptions* options, std::ostream& out)
    : out_(out) {
  tracker_ = driver::CheckEveryPass(
      options, seed, {}, kRtol, kAtol, /*loop_passes=*/true, [this](const driver::PassDrift& drift) {
        out_ << "kiln-opt: numerics after #" << drift.index << " " << drift.pass << ": "
             << Line(drift.report) << "\n";
        if (!drift.layers_status.ok()) {
          out_ << "kiln-opt:   layers not compared: " << drift.layers_status.message() << "\n";
        }
        for (const driver::LayerDrift& layer : drift.layers) {
          out_ << absl::StrFormat("kiln-opt:   layer %s: max rel %.3g, max abs %.3g\n",
                                  absl::StrJoin(layer.layers, ", "), layer.max_rel_error,
                                  layer.max_abs_error);
        }
      });
}

void DriftPrinter::PrintNative(const driver::CompileResult& compiled) {
  if (!compiled.native.has_value()) return;
  out_ << "kiln-opt: numerics of the native code: " << Line(tracker_->AfterNative(compiled)) << "\n";
}

}  // namespace kiln::tools
