// One conformance case: model + test_data_set_0 -> outcome.
#include "tools/kiln-conformance/conformance_case.h"

#include <cmath>
#include <map>
#include <set>

#include <onnx/onnx_pb.h>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "engine/driver/driver.h"
#include "engine/driver/run_model.h"
#include "engine/loop/host_tensor.h"
#include "engine/loop/interpreter.h"
#include "engine/support/status_macros.h"
#include "tools/common/tensor_files.h"

namespace kiln::conformance {

namespace fs = std::filesystem;

const char* StageName(Stage stage) {
  switch (stage) {
    case Stage::kPassed: return "passed";
    case Stage::kUnsupportedOp: return "unsupported op";
    case Stage::kImportError: return "import error";
    case Stage::kCompileError: return "compile error";
    case Stage::kRunError: return "run error";
    case Stage::kWrongResult: return "wrong result";
    case Stage::kCrash: return "crash";
    case Stage::kTimeout: return "timeout";
  }
  return "?";
}

bool ParseStageName(const std::string& name, Stage* stage) {
  for (Stage s : {Stage::kPassed, Stage::kUnsupportedOp, Stage::kImportError,
                  Stage::kCompileError, Stage::kRunError, Stage::kWrongResult, Stage::kCrash,
                  Stage::kTimeout}) {
    if (name == StageName(s)) {
      *stage = s;
      return true;
    }
  }
  return false;
}

namespace {

constexpr int64_t kMaxTensorElements = int64_t{1} << 28;

std::string FirstLine(const absl::Status& status) {
  std::string message(status.message());
  return message.substr(0, message.find('\n'));
}

// input_0.pb, input_1.pb, ... (or output_*) in index order.
// The test's `prefix` files (input_0.pb, ...) for `values` (the graph's inputs less its
// initializers, or its outputs), in order: a tensor file for a tensor, a SequenceProto file for a
// sequence, whose elements are appended in order (as Kiln's main takes and returns them).
// `sequence_shapes` receives each sequence's element shapes.
absl::StatusOr<std::vector<loop::HostTensor>> ReadTensors(
    const fs::path& dir, const std::string& prefix,
    const std::vector<const onnx::ValueInfoProto*>& values,
    std::map<std::string, std::vector<std::vector<int64_t>>>* sequence_shapes) {
  std::vector<loop::HostTensor> tensors;
  for (size_t i = 0; i < values.size(); ++i) {
    fs::path path = dir / absl::StrCat(prefix, "_", i, ".pb");
    if (!fs::exists(path)) break;
    if (values[i]->type().has_sequence_type()) {
      KILN_ASSIGN_OR_RETURN(std::vector<loop::HostTensor> elements,
                            tools::ReadTensorSequenceFile(path.string(), kMaxTensorElements));
      std::vector<std::vector<int64_t>>& shapes = (*sequence_shapes)[values[i]->name()];
      for (loop::HostTensor& element : elements) {
        shapes.push_back(element.shape);
        tensors.push_back(std::move(element));
      }
      continue;
    }
    KILN_ASSIGN_OR_RETURN(loop::HostTensor tensor,
                          tools::ReadTensorFile(path.string(), kMaxTensorElements));
    tensors.push_back(std::move(tensor));
  }
  return tensors;
}

// The first element where `actual` and `expected` differ beyond tolerance,
// as a message; empty when they match.
std::string Compare(const loop::HostTensor& actual, const loop::HostTensor& expected,
                    const Tolerance& tolerance) {
  if (actual.dtype != expected.dtype) {
    return absl::StrCat("dtype ", DataTypeName(actual.dtype), ", expected ",
                        DataTypeName(expected.dtype));
  }
  if (actual.NumElements() != expected.NumElements()) {
    return absl::StrCat(actual.NumElements(), " elements, expected ", expected.NumElements());
  }
  bool exact = !IsFloat(actual.dtype);
  if (exact) {
    if (actual.bytes == expected.bytes) return "";
  }
  std::vector<double> a = actual.ToDoubles();
  std::vector<double> e = expected.ToDoubles();
  for (size_t i = 0; i < a.size(); ++i) {
    bool same;
    if (exact) {
      same = a[i] == e[i];
    } else if (std::isnan(e[i]) || std::isnan(a[i])) {
      same = std::isnan(e[i]) && std::isnan(a[i]);
    } else if (std::isinf(e[i]) || std::isinf(a[i])) {
      same = a[i] == e[i];
    } else {
      same = std::fabs(a[i] - e[i]) <= tolerance.atol + tolerance.rtol * std::fabs(e[i]);
    }
    if (!same) {
      return absl::StrCat("element ", i, " is ", a[i], ", expected ", e[i]);
    }
  }
  return "";
}

}  // namespace

CaseOutcome RunCase(const fs::path& dir, const Tolerance& tolerance, driver::Backend backend) {
  absl::StatusOr<std::string> model = tools::ReadFileBytes((dir / "model.onnx").string());
  if (!model.ok()) return {Stage::kImportError, FirstLine(model.status())};
  onnx::ModelProto proto;
  if (!proto.ParseFromString(*model)) return {Stage::kImportError, "model.onnx does not parse"};
  std::set<std::string> initializers;
  for (const auto& init : proto.graph().initializer()) initializers.insert(init.name());
  std::vector<const onnx::ValueInfoProto*> graph_inputs, graph_outputs;
  for (const auto& input : proto.graph().input()) {
    if (!initializers.count(input.name())) graph_inputs.push_back(&input);
  }
  for (const auto& output : proto.graph().output()) graph_outputs.push_back(&output);

  // The test's inputs fix every dimension the model leaves symbolic, and every sequence's length.
  driver::CompileOptions options;
  if (backend == driver::Backend::kNative) options.codegen = driver::HostCodegenOptions();
  fs::path data_dir = dir / "test_data_set_0";
  std::map<std::string, std::vector<std::vector<int64_t>>> output_sequence_shapes;
  absl::StatusOr<std::vector<loop::HostTensor>> inputs =
      ReadTensors(data_dir, "input", graph_inputs, &options.import.input_sequence_shapes);
  if (!inputs.ok()) return {Stage::kImportError, FirstLine(inputs.status())};
  absl::StatusOr<std::vector<loop::HostTensor>> expected =
      ReadTensors(data_dir, "output", graph_outputs, &output_sequence_shapes);
  if (!expected.ok()) return {Stage::kImportError, FirstLine(expected.status())};
  std::map<std::string, TensorData> values;
  size_t next_input = 0;
  for (const onnx::ValueInfoProto* input : graph_inputs) {
    auto sequence = options.import.input_sequence_shapes.find(input->name());
    if (sequence != options.import.input_sequence_shapes.end()) {
      next_input += sequence->second.size();
      continue;
    }
    if (next_input < inputs->size()) {
      options.import.input_shapes[input->name()] = (*inputs)[next_input].shape;
      values[input->name()] = (*inputs)[next_input].ToTensorData();
    }
    ++next_input;
  }

  driver::CompileFailure failure;
  absl::StatusOr<driver::CompileResult> compiled = driver::CompileOnnx(*model, options, &failure);
  std::string unspecialized_failure;
  if (!compiled.ok()) {
    // Kiln compiles static shapes: an input an operator needs at compile time (a shape, axes,
    // k, scales) is specialized to the test's value, and the case is marked as needing it.
    unspecialized_failure = FirstLine(compiled.status());
    options.import.input_values = std::move(values);
    failure = driver::CompileFailure();
    compiled = driver::CompileOnnx(*model, options, &failure);
  }
  if (!compiled.ok()) {
    if (failure.stage != driver::CompileStage::kImport) {
      return {Stage::kCompileError, FirstLine(compiled.status())};
    }
    bool unsupported = compiled.status().code() == absl::StatusCode::kUnimplemented;
    return {unsupported ? Stage::kUnsupportedOp : Stage::kImportError,
            FirstLine(compiled.status())};
  }
  driver::ModelTensors signature = driver::MakeModelTensors(*compiled);
  if (signature.inputs.size() != inputs->size() || signature.outputs.size() != expected->size()) {
    return {Stage::kCompileError,
            absl::StrCat("the compiled model takes ", signature.inputs.size(), " inputs and gives ",
                         signature.outputs.size(), " outputs; the test has ", inputs->size(),
                         " and ", expected->size())};
  }
  std::vector<loop::HostTensor>& outputs = signature.outputs;
  // ONNX 1.12's test data stores bfloat16 tensors with data type UINT16 (the
  // same 16 bits): read them as the bfloat16 the model declares.
  for (size_t i = 0; i < inputs->size(); ++i) {
    loop::HostTensor& input = (*inputs)[i];
    if (input.dtype == DataType::kUInt16 && signature.inputs[i].dtype == DataType::kBFloat16) {
      input.dtype = DataType::kBFloat16;
    }
  }
  for (size_t i = 0; i < expected->size(); ++i) {
    if ((*expected)[i].dtype == DataType::kUInt16 && outputs[i].dtype == DataType::kBFloat16) {
      (*expected)[i].dtype = DataType::kBFloat16;
    }
  }
  std::vector<loop::HostTensor*> input_args;
  for (auto& t : *inputs) input_args.push_back(&t);
  std::vector<loop::HostTensor*> output_args;
  for (auto& t : outputs) output_args.push_back(&t);
  // The time limit of the isolated child bounds a run; the default step
  // budget (a few seconds) would stop the larger convolutions first.
  loop::InterpreterOptions interpreter_options;
  interpreter_options.max_steps = int64_t{40'000'000'000};
  interpreter_options.max_allocation_bytes = int64_t{4} << 30;
  absl::Status ran = backend == driver::Backend::kNative
                         ? driver::RunNative(*compiled, input_args, output_args)
                         : driver::RunModel(*compiled, input_args, output_args, interpreter_options);
  if (!ran.ok()) return {Stage::kRunError, FirstLine(ran)};

  for (size_t i = 0; i < outputs.size(); ++i) {
    std::string mismatch = Compare(outputs[i], (*expected)[i], tolerance);
    if (!mismatch.empty()) {
      return {Stage::kWrongResult, absl::StrCat("output ", i, ": ", mismatch)};
    }
  }
  if (!unspecialized_failure.empty()) return {Stage::kPassed, unspecialized_failure, true};
  return {Stage::kPassed, ""};
}

}  // namespace kiln::conformance
