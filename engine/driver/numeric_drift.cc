// DriftChecker: seeded inputs, the reference run, and each snapshot's run compared with it.
#include "engine/driver/numeric_drift.h"

#include <algorithm>
#include <cmath>
#include <random>

#include "absl/strings/str_cat.h"
#include "engine/driver/run_model.h"
#include "engine/support/status_macros.h"

namespace kiln::driver {
namespace {

// Lowering needs primitive functions; level 0 fuses nothing together, so a snapshot's own
// fusion decisions (when FuseOps already ran) are kept and no optimization is added.
constexpr char kRunPipeline[] = "InferType,FuseOps{fuse_opt_level=0},InferType";

// Inputs and outputs beyond this many bytes are not checked: the check runs every snapshot.
constexpr int64_t kMaxCheckedBytes = int64_t{1} << 30;

loop::HostTensor SeededTensor(const loop::HostTensor& like, std::mt19937_64& random) {
  std::vector<double> values(static_cast<size_t>(like.NumElements()));
  if (IsFloat(like.dtype)) {
    std::uniform_real_distribution<double> uniform(-1.0, 1.0);
    for (double& v : values) v = uniform(random);
  } else if (like.dtype == DataType::kBool) {
    for (double& v : values) v = static_cast<double>(random() & 1);
  } else {
    for (double& v : values) v = static_cast<double>(random() % 4);
  }
  return loop::HostTensor::FromDoubles(like.dtype, like.shape, values);
}

}  // namespace

absl::StatusOr<std::unique_ptr<DriftChecker>> DriftChecker::Create(const IRModule& imported,
                                                                   uint64_t seed,
                                                                   const CompileOptions& base) {
  std::unique_ptr<DriftChecker> checker(new DriftChecker());
  CompileOptions& options = checker->options_;
  options.import = base.import;
  options.limits = base.limits;
  options.is_cancelled = base.is_cancelled;
  options.pipeline = kRunPipeline;
  options.opt_level = 0;
  options.lower = true;
  options.codegen.reset();

  KILN_ASSIGN_OR_RETURN(CompileResult reference, checker->Lower(imported));
  ModelTensors tensors = MakeModelTensors(reference);
  int64_t bytes = 0;
  for (const auto& list : {tensors.inputs, tensors.outputs}) {
    for (const loop::HostTensor& tensor : list) bytes += static_cast<int64_t>(tensor.bytes.size());
  }
  if (bytes > kMaxCheckedBytes) {
    return absl::ResourceExhaustedError(absl::StrCat(
        "the model's inputs and outputs are ", bytes, " bytes; numerics are checked up to ",
        kMaxCheckedBytes));
  }
  std::mt19937_64 random(seed);
  for (const loop::HostTensor& input : tensors.inputs) {
    checker->inputs_.push_back(SeededTensor(input, random));
  }
  checker->output_names_ = tensors.output_names;
  KILN_ASSIGN_OR_RETURN(checker->reference_, checker->Run(reference, /*native=*/false));
  return checker;
}

absl::StatusOr<CompileResult> DriftChecker::Lower(const IRModule& module) const {
  CompileFailure failure;
  absl::StatusOr<CompileResult> compiled = CompileModule(module, options_, &failure);
  if (!compiled.ok()) {
    return absl::Status(compiled.status().code(),
                        absl::StrCat("running the module for the numerics check: ",
                                     CompileStageName(failure.stage), ": ",
                                     compiled.status().message()));
  }
  return compiled;
}

absl::StatusOr<std::vector<loop::HostTensor>> DriftChecker::Run(const CompileResult& compiled,
                                                                bool native) const {
  ModelTensors tensors = MakeModelTensors(compiled);
  if (tensors.inputs.size() != inputs_.size()) {
    return absl::FailedPreconditionError(absl::StrCat(
        "the module has ", tensors.inputs.size(), " inputs; as imported it had ", inputs_.size()));
  }
  std::vector<loop::HostTensor> inputs = inputs_;
  std::vector<loop::HostTensor*> input_pointers, output_pointers;
  for (size_t i = 0; i < inputs.size(); ++i) {
    if (inputs[i].dtype != tensors.inputs[i].dtype || inputs[i].shape != tensors.inputs[i].shape) {
      return absl::FailedPreconditionError(absl::StrCat("input ", i, " (", tensors.input_names[i],
                                                        ") changed its type since the import"));
    }
    input_pointers.push_back(&inputs[i]);
  }
  for (loop::HostTensor& output : tensors.outputs) output_pointers.push_back(&output);
  if (native) {
    KILN_RETURN_IF_ERROR(RunNative(compiled, input_pointers, output_pointers));
  } else {
    loop::InterpreterOptions interpreter;
    interpreter.is_cancelled = options_.is_cancelled;
    KILN_RETURN_IF_ERROR(RunModel(compiled, input_pointers, output_pointers, interpreter));
  }
  return std::move(tensors.outputs);
}

absl::StatusOr<DriftReport> DriftChecker::Compare(std::string backend,
                                                  const std::vector<loop::HostTensor>& outputs) const {
  if (outputs.size() != reference_.size()) {
    return absl::FailedPreconditionError(absl::StrCat(
        "the module has ", outputs.size(), " outputs; as imported it had ", reference_.size()));
  }
  DriftReport report;
  report.backend = std::move(backend);
  for (size_t i = 0; i < outputs.size(); ++i) {
    if (outputs[i].shape != reference_[i].shape) {
      return absl::FailedPreconditionError(
          absl::StrCat("output ", i, " (", output_names_[i], ") changed its shape"));
    }
    OutputDrift drift;
    drift.name = output_names_[i];
    std::vector<double> got = outputs[i].ToDoubles(), want = reference_[i].ToDoubles();
    for (size_t k = 0; k < got.size(); ++k) {
      double error = std::fabs(got[k] - want[k]);
      if (std::isnan(got[k]) != std::isnan(want[k])) error = INFINITY;
      if (std::isnan(got[k]) && std::isnan(want[k])) error = 0;
      if (std::isinf(want[k]) && got[k] == want[k]) error = 0;
      drift.max_abs_error = std::max(drift.max_abs_error, error);
      drift.max_rel_error =
          std::max(drift.max_rel_error, error / std::max(std::fabs(want[k]), kDriftRelativeFloor));
    }
    report.max_abs_error = std::max(report.max_abs_error, drift.max_abs_error);
    report.max_rel_error = std::max(report.max_rel_error, drift.max_rel_error);
    report.outputs.push_back(std::move(drift));
  }
  return report;
}

absl::StatusOr<DriftReport> DriftChecker::CheckGraphModule(const IRModule& snapshot) const {
  KILN_ASSIGN_OR_RETURN(CompileResult compiled, Lower(snapshot));
  KILN_ASSIGN_OR_RETURN(std::vector<loop::HostTensor> outputs, Run(compiled, /*native=*/false));
  return Compare("interp", outputs);
}

absl::StatusOr<DriftReport> DriftChecker::CheckNative(const CompileResult& compiled) const {
  KILN_ASSIGN_OR_RETURN(std::vector<loop::HostTensor> outputs, Run(compiled, /*native=*/true));
  return Compare("native", outputs);
}

absl::Status DriftTracker::EnsureChecker(const IRModule& imported) {
  if (!tried_) {
    tried_ = true;
    absl::StatusOr<std::unique_ptr<DriftChecker>> checker =
        DriftChecker::Create(imported, seed_, base_);
    if (checker.ok()) {
      checker_ = *std::move(checker);
    } else {
      creation_ = checker.status();
    }
  }
  return creation_;
}

absl::StatusOr<DriftReport> DriftTracker::AfterGraphPass(const PassEvent& event) {
  if (!tried_) {
    if (!event.ir_before) {
      return absl::InternalError("the first graph pass's event carries no input module");
    }
    KILN_RETURN_IF_ERROR(EnsureChecker(event.ir_before));
  }
  KILN_RETURN_IF_ERROR(creation_);
  if (!event.ir_after) return absl::InternalError("the pass's event carries no output module");
  if (!event.changed && last_.has_value()) return *last_;
  absl::StatusOr<DriftReport> report = checker_->CheckGraphModule(event.ir_after);
  if (report.ok()) last_ = *report;
  return report;
}

absl::StatusOr<DriftReport> DriftTracker::AfterNative(const CompileResult& compiled) {
  KILN_RETURN_IF_ERROR(EnsureChecker(compiled.imported));
  return checker_->CheckNative(compiled);
}

}  // namespace kiln::driver
