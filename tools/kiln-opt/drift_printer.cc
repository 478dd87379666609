// DriftPrinter: the numerics check's lines on kiln-opt's stderr.
#include "tools/kiln-opt/drift_printer.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"

namespace kiln::tools {
namespace {

std::string Line(const absl::StatusOr<driver::DriftReport>& report) {
  if (!report.ok()) return absl::StrCat("not checked: ", report.status().message());
  return absl::StrFormat("max rel %.3g, max abs %.3g (%s)", report->max_rel_error,
                         report->max_abs_error, report->backend);
}

}  // namespace

DriftPrinter::DriftPrinter(uint64_t seed, driver::DriftBackend backend, double rtol, double atol,
                           driver::CompileOptions* options, std::ostream& out)
    : rtol_(rtol), atol_(atol), out_(out) {
  tracker_ = driver::CheckEveryPass(
      options, seed, {}, rtol, atol, /*loop_passes=*/true, [this](const driver::PassDrift& drift) {
        out_ << "kiln-opt: numerics after #" << drift.index << " " << drift.pass << ": "
             << Line(drift.report) << "\n";
        std::string layers;
        if (!drift.layers_status.ok()) {
          out_ << "kiln-opt:   layers not compared: " << drift.layers_status.message() << "\n";
        }
        for (const driver::LayerDrift& layer : drift.layers) {
          std::string line = absl::StrFormat("layer %s: max rel %.3g, max abs %.3g",
                                             absl::StrJoin(layer.layers, ", "),
                                             layer.max_rel_error, layer.max_abs_error);
          out_ << "kiln-opt:   " << line << "\n";
          if (layers.empty()) layers = line;  // the first in the model's order
        }
        if (first_excess_.empty() && Over(drift.report)) {
          first_excess_ = absl::StrCat(drift.stage, " pass #", drift.index, " ", drift.pass, " (",
                                       Line(drift.report), ")");
          if (!layers.empty()) absl::StrAppend(&first_excess_, "; first ", layers);
        }
      },
      backend);
}

bool DriftPrinter::Over(const absl::StatusOr<driver::DriftReport>& report) const {
  if (!report.ok()) return false;
  for (const driver::OutputDrift& output : report->outputs) {
    if (output.max_rel_error > rtol_ && output.max_abs_error > atol_) return true;
  }
  return false;
}

void DriftPrinter::PrintNative(const driver::CompileResult& compiled) {
  if (!compiled.native.has_value()) return;
  absl::StatusOr<driver::DriftReport> native = tracker_->AfterNative(compiled);
  out_ << "kiln-opt: numerics of the native code: " << Line(native) << "\n";
  if (first_excess_.empty() && Over(native)) {
    first_excess_ = absl::StrCat("the native code (", Line(native), ")");
  }
  absl::StatusOr<driver::KernelPrecisionReport> kernels = tracker_->KernelPrecision(compiled);
  if (!kernels.ok()) {
    out_ << "kiln-opt: kernel precision not checked: " << kernels.status().message() << "\n";
    return;
  }
  int exact = 0;
  for (const driver::KernelDrift& kernel : kernels->kernels) exact += kernel.max_abs_error == 0;
  out_ << absl::StrFormat(
      "kiln-opt: kernel precision (each kernel on exact inputs, against %s): %d kernels, %d "
      "exact, %d not compared\n",
      kernels->reference, kernels->kernels.size(), exact, kernels->kernels_not_compared);
  for (const driver::KernelDrift& kernel : kernels->kernels) {
    if (kernel.max_abs_error == 0) continue;
    out_ << absl::StrFormat("kiln-opt:   kernel %s [%s]: max rel %.3g, max abs %.3g\n",
                            kernel.kernel, absl::StrJoin(kernel.layers, ", "),
                            kernel.max_rel_error, kernel.max_abs_error);
  }
}

}  // namespace kiln::tools
