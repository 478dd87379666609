// PrintIR: the filter and the dumping instrument.
#include "engine/pass/print_ir.h"

#include <algorithm>

#include "absl/strings/str_cat.h"

namespace kiln {
namespace {

bool Named(const std::vector<std::string>& names, std::string_view name) {
  return std::find(names.begin(), names.end(), name) != names.end();
}

}  // namespace

bool PrintIRFilter::PrintBefore(std::string_view pass, bool is_sequential) const {
  if (Named(before, pass)) return true;
  return before_all && !is_sequential;
}

bool PrintIRFilter::PrintAfter(std::string_view pass, bool is_sequential, bool changed) const {
  if (only_changed && !changed) return false;
  if (Named(after, pass)) return true;
  return after_all && !is_sequential;
}

PrintIR::PrintIR(PrintIRFilter filter, std::ostream* out, PrintOptions print_options)
    : PrintIR(std::move(filter),
              [out, print_options](const std::string& title, const IRModule& module) {
                *out << "// -----// " << title << " //----- //\n"
                     << PrintModule(module, print_options) << "\n";
                out->flush();
              }) {}

PrintIR::PrintIR(PrintIRFilter filter, Sink sink)
    : PassInstrument("PrintIR"), filter_(std::move(filter)), sink_(std::move(sink)) {}

// inputs_ is indexed by depth, so a pass whose after hook never came (another
// instrument's RunBeforePass failed) cannot shift the entries of the others.
absl::Status PrintIR::RunBeforePass(const IRModule& module, const PassInvocation& pass) {
  inputs_.resize(pass.depth);
  inputs_.push_back(module);
  if (filter_.PrintBefore(pass.name(), pass.pass.is_sequential())) {
    sink_(absl::StrCat("IR Dump Before ", pass.name()), module);
  }
  return absl::OkStatus();
}

absl::Status PrintIR::RunAfterPass(const IRModule& module, const PassInvocation& pass) {
  if (inputs_.size() <= static_cast<size_t>(pass.depth)) return absl::OkStatus();
  bool changed = !module.same_as(inputs_[pass.depth]);
  inputs_.resize(pass.depth);
  if (filter_.PrintAfter(pass.name(), pass.pass.is_sequential(), changed)) {
    sink_(absl::StrCat("IR Dump After ", pass.name()), module);
  }
  return absl::OkStatus();
}

absl::Status PrintIR::RunAfterPassFailed(const IRModule&, const PassInvocation& pass,
                                         const absl::Status&) {
  if (inputs_.size() > static_cast<size_t>(pass.depth)) inputs_.resize(pass.depth);
  return absl::OkStatus();
}

}  // namespace kiln
