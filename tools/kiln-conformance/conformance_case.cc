// One conformance case: model + test_data_set_0 -> outcome.
#include "tools/kiln-conformance/conformance_case.h"

#include <cmath>
#include <map>
#include <set>

#include <onnx/onnx_pb.h>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "engine/driver/numeric_drift.h"
#include "absl/strings/str_join.h"
#include "engine/driver/bounded_outputs.h"
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
// The tensors of a test's input or output files, flattened as Kiln's main takes and returns
// them: a sequence's elements in order, an optional's value (nothing when empty).
struct TestTensors {
  std::vector<loop::HostTensor> tensors;
  std::vector<size_t> counts;  // tensors per graph value
  std::map<std::string, std::vector<std::vector<int64_t>>> sequence_shapes;
  std::set<std::string> empty_optionals;
};

// The test's `prefix` files (input_0.pb, ...) for `values` (the graph's inputs less its
// initializers, or its outputs), in order: a TensorProto, SequenceProto or OptionalProto file
// as the value's type says.
absl::StatusOr<TestTensors> ReadTensors(const fs::path& dir, const std::string& prefix,
                                        const std::vector<const onnx::ValueInfoProto*>& values) {
  TestTensors out;
  for (size_t i = 0; i < values.size(); ++i) {
    fs::path path = dir / absl::StrCat(prefix, "_", i, ".pb");
    if (!fs::exists(path)) break;
    const std::string& name = values[i]->name();
    const onnx::TypeProto& type = values[i]->type();
    const size_t before = out.tensors.size();
    if (type.has_sequence_type() || type.has_optional_type()) {
      KILN_ASSIGN_OR_RETURN(tools::TensorContainer container,
                            tools::ReadTensorContainerFile(path.string(), type.has_optional_type(),
                                                           kMaxTensorElements));
      if (container.kind == tools::TensorContainer::kEmptyOptional) {
        out.empty_optionals.insert(name);
      } else if (container.kind == tools::TensorContainer::kSequence) {
        std::vector<std::vector<int64_t>>& shapes = out.sequence_shapes[name];
        for (const loop::HostTensor& t : container.tensors) shapes.push_back(t.shape);
      }
      for (loop::HostTensor& t : container.tensors) out.tensors.push_back(std::move(t));
    } else {
      KILN_ASSIGN_OR_RETURN(loop::HostTensor tensor,
                            tools::ReadTensorFile(path.string(), kMaxTensorElements));
      out.tensors.push_back(std::move(tensor));
    }
    out.counts.push_back(out.tensors.size() - before);
  }
  return out;
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
  if (actual.dtype == DataType::kString) {
    std::vector<std::string> a = actual.Strings();
    std::vector<std::string> e = expected.Strings();
    for (size_t i = 0; i < a.size(); ++i) {
      if (a[i] != e[i]) return absl::StrCat("element ", i, " is '", a[i], "', expected '", e[i], "'");
    }
    return "";
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

// One compile and run of a case; `retry_specialized` when it failed in a way input
// specialization may avoid (compiling, or the run's check of a declared shape).
struct Attempt {
  CaseOutcome outcome;
  bool retry_specialized = false;
};

// `inputs` and `expected` are copies: the bfloat16 fix-up below retypes them for this compile.
Attempt CompileAndRun(const std::string& model, const driver::CompileOptions& options,
                      std::vector<loop::HostTensor> inputs, std::vector<loop::HostTensor> expected,
                      const Tolerance& tolerance, driver::Backend backend) {
  driver::CompileFailure failure;
  absl::StatusOr<driver::CompileResult> compiled = driver::CompileOnnx(model, options, &failure);
  if (!compiled.ok()) {
    if (failure.stage != driver::CompileStage::kImport) {
      return {{Stage::kCompileError, FirstLine(compiled.status())}, true};
    }
    bool unsupported = compiled.status().code() == absl::StatusCode::kUnimplemented;
    return {{unsupported ? Stage::kUnsupportedOp : Stage::kImportError,
             FirstLine(compiled.status())},
            true};
  }
  driver::ModelTensors signature = driver::MakeModelTensors(*compiled);
  // Main appends one length output per bounded output (cut after the run).
  const std::vector<lower::BoundedOutput> bounded =
      compiled->lowered ? compiled->lowered->bounded_outputs : std::vector<lower::BoundedOutput>{};
  if (signature.inputs.size() != inputs.size() ||
      signature.outputs.size() != expected.size() + bounded.size()) {
    return {{Stage::kCompileError,
             absl::StrCat("the compiled model takes ", signature.inputs.size(), " inputs and gives ",
                          signature.outputs.size() - bounded.size(), " outputs",
                          bounded.empty() ? "" : absl::StrCat(" (and ", bounded.size(),
                                                              " bounded outputs' lengths)"),
                          "; the test has ", inputs.size(), " and ", expected.size())}};
  }
  std::vector<loop::HostTensor>& outputs = signature.outputs;
  // ONNX 1.12's test data stores bfloat16 tensors with data type UINT16 (the
  // same 16 bits): read them as the bfloat16 the model declares.
  for (size_t i = 0; i < inputs.size(); ++i) {
    loop::HostTensor& input = inputs[i];
    if (input.dtype == DataType::kUInt16 && signature.inputs[i].dtype == DataType::kBFloat16) {
      input.dtype = DataType::kBFloat16;
    }
  }
  for (size_t i = 0; i < expected.size(); ++i) {
    if (expected[i].dtype == DataType::kUInt16 && signature.outputs[i].dtype == DataType::kBFloat16) {
      expected[i].dtype = DataType::kBFloat16;
    }
  }
  std::vector<loop::HostTensor*> input_args;
  for (auto& t : inputs) input_args.push_back(&t);
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
  if (!ran.ok()) {
    // A shape check's failure is InvalidArgument (the run itself cannot fail so otherwise).
    return {{Stage::kRunError, FirstLine(ran)}, ran.code() == absl::StatusCode::kInvalidArgument};
  }
  if (absl::Status cut = driver::CutBoundedOutputs(bounded, &outputs); !cut.ok()) {
    return {{Stage::kRunError, FirstLine(cut)}};
  }

  for (size_t i = 0; i < outputs.size(); ++i) {
    std::string mismatch = Compare(outputs[i], expected[i], tolerance);
    if (!mismatch.empty()) {
      return {{Stage::kWrongResult, absl::StrCat("output ", i, ": ", mismatch)}};
    }
  }
  return {{Stage::kPassed, ""}};
}

// A case read from `dir`: its model, the compile options its test data fixes (input shapes,
// sequences, optionals), its inputs and expected outputs, and the input values specialization
// would give the importer.
struct PreparedCase {
  std::string model;
  // The ONNX element type of each single-tensor input, in order (0 for sequences).
  std::vector<int> input_elem_types;
  driver::CompileOptions options;
  TestTensors inputs, expected;
  std::map<std::string, TensorData> values;
};

absl::StatusOr<PreparedCase> PrepareCase(const fs::path& dir, driver::Backend backend,
                                         CaseOutcome* failed) {
  PreparedCase prepared;
  absl::StatusOr<std::string> model = tools::ReadFileBytes((dir / "model.onnx").string());
  if (!model.ok()) {
    *failed = {Stage::kImportError, FirstLine(model.status())};
    return model.status();
  }
  prepared.model = *std::move(model);
  onnx::ModelProto proto;
  if (!proto.ParseFromString(prepared.model)) {
    *failed = {Stage::kImportError, "model.onnx does not parse"};
    return absl::InvalidArgumentError(failed->message);
  }
  std::set<std::string> initializers;
  for (const auto& init : proto.graph().initializer()) initializers.insert(init.name());
  std::vector<const onnx::ValueInfoProto*> graph_inputs, graph_outputs;
  for (const auto& input : proto.graph().input()) {
    if (!initializers.count(input.name())) graph_inputs.push_back(&input);
  }
  for (const auto& output : proto.graph().output()) graph_outputs.push_back(&output);

  // The test's inputs fix every dimension the model leaves symbolic, and every sequence's length.
  driver::CompileOptions& options = prepared.options;
  if (backend == driver::Backend::kNative) options.codegen = driver::HostCodegenOptions();
  fs::path data_dir = dir / "test_data_set_0";
  absl::StatusOr<TestTensors> read_inputs = ReadTensors(data_dir, "input", graph_inputs);
  if (!read_inputs.ok()) {
    *failed = {Stage::kImportError, FirstLine(read_inputs.status())};
    return read_inputs.status();
  }
  absl::StatusOr<TestTensors> read_expected = ReadTensors(data_dir, "output", graph_outputs);
  if (!read_expected.ok()) {
    *failed = {Stage::kImportError, FirstLine(read_expected.status())};
    return read_expected.status();
  }
  prepared.inputs = *std::move(read_inputs);
  prepared.expected = *std::move(read_expected);
  options.import.input_sequence_shapes = prepared.inputs.sequence_shapes;
  options.import.empty_optional_inputs = prepared.inputs.empty_optionals;
  size_t next_input = 0;
  for (size_t k = 0; k < prepared.inputs.counts.size(); ++k) {
    const std::string& name = graph_inputs[k]->name();
    if (!prepared.inputs.sequence_shapes.count(name) && prepared.inputs.counts[k] == 1) {
      prepared.input_elem_types.push_back(graph_inputs[k]->type().tensor_type().elem_type());
      options.import.input_shapes[name] = prepared.inputs.tensors[next_input].shape;
      // A string has no constant form (its words are pointers): never specialized.
      if (prepared.inputs.tensors[next_input].dtype != DataType::kString) {
        prepared.values[name] = prepared.inputs.tensors[next_input].ToTensorData();
      }
    }
    next_input += prepared.inputs.counts[k];
  }
  return prepared;
}

}  // namespace

CaseOutcome RunCase(const fs::path& dir, const Tolerance& tolerance, driver::Backend backend) {
  CaseOutcome failed;
  absl::StatusOr<PreparedCase> prepared = PrepareCase(dir, backend, &failed);
  if (!prepared.ok()) return failed;
  driver::CompileOptions& options = prepared->options;
  const std::string& model_bytes = prepared->model;
  std::vector<loop::HostTensor>* inputs = &prepared->inputs.tensors;
  std::vector<loop::HostTensor>* expected = &prepared->expected.tensors;
  std::map<std::string, TensorData>& values = prepared->values;
  const std::string* model = &model_bytes;

  // Kiln compiles static shapes: an input an operator needs at compile time (a shape, axes, k,
  // scales) and whose result the model does not declare is specialized to the test's value, and
  // the case is marked as needing it. So is a case whose declared shapes the test's own values
  // contradict (the run's shape check fails).
  Attempt unspecialized = CompileAndRun(*model, options, *inputs, *expected, tolerance, backend);
  if (!unspecialized.retry_specialized) return unspecialized.outcome;
  options.import.input_values = std::move(values);
  Attempt specialized = CompileAndRun(*model, options, *inputs, *expected, tolerance, backend);
  if (specialized.outcome.stage != Stage::kPassed) return specialized.outcome;
  return {Stage::kPassed, unspecialized.outcome.message, true};
}

namespace {

// What the numerics check of a case found: the first graph pass past the tolerance, or the
// first module that could not be checked.
struct FirstExcess {
  bool found = false;
  std::string message, error;

  void Observe(const driver::PassDrift& drift, const Tolerance& tolerance) {
    if (found) return;
    if (!drift.report.ok()) {
      if (error.empty()) error = absl::StrCat(drift.pass, ": ", FirstLine(drift.report.status()));
      return;
    }
    for (const driver::OutputDrift& output : drift.report->outputs) {
      if (output.max_rel_error <= tolerance.rtol || output.max_abs_error <= tolerance.atol) continue;
      found = true;
      message = absl::StrFormat("pass %s moves output %s by max rel %.3g, max abs %.3g",
                                drift.pass, output.name, output.max_rel_error,
                                output.max_abs_error);
      if (!drift.layers.empty()) {
        absl::StrAppend(&message, "; first at layer ", absl::StrJoin(drift.layers.front().layers, ", "));
      }
      return;
    }
  }
};

}  // namespace

CaseOutcome CheckNumerics(const fs::path& dir, const Tolerance& tolerance) {
  CaseOutcome failed;
  absl::StatusOr<PreparedCase> prepared = PrepareCase(dir, driver::Backend::kInterpreter, &failed);
  if (!prepared.ok()) return failed;
  for (bool specialized : {false, true}) {
    driver::CompileOptions options = prepared->options;
    if (specialized) options.import.input_values = prepared->values;
    // The interpreter's default step budget (CompileAndRun raises only its own run's, not the
    // compile's): this check runs every changed graph module once more, so a case over the budget
    // (a large convolution) is checked on native code for this machine (DriftBackend::kAuto)
    // within the child's time limit.
    // The test's own inputs: integer inputs there are valid shapes and indices. ONNX 1.12's test
    // data stores bfloat16 inputs as UINT16 (the same bits): read as the model declares them.
    std::vector<loop::HostTensor> inputs = prepared->inputs.tensors;
    if (inputs.size() == prepared->input_elem_types.size()) {
      for (size_t i = 0; i < inputs.size(); ++i) {
        if (inputs[i].dtype == DataType::kUInt16 &&
            prepared->input_elem_types[i] == onnx::TensorProto::BFLOAT16) {
          inputs[i].dtype = DataType::kBFloat16;
        }
      }
    }
    FirstExcess first;
    // Graph passes only: interpreting a large case once per loop pass would pass its time limit.
    driver::CheckEveryPass(&options, 0, std::move(inputs), tolerance.rtol, tolerance.atol,
                           /*loop_passes=*/false, [&](const driver::PassDrift& drift) {
                                  first.Observe(drift, tolerance);
                                });
    absl::StatusOr<driver::CompileResult> compiled = driver::CompileOnnx(prepared->model, options);
    if (!compiled.ok()) {
      if (!specialized) continue;  // as RunCase: specialization is the fallback
      return {Stage::kCompileError, FirstLine(compiled.status())};
    }
    if (first.found) return {Stage::kWrongResult, first.message};
    if (!first.error.empty()) return {Stage::kRunError, absl::StrCat("numerics not checked after ", first.error)};
    return {Stage::kPassed, ""};
  }
  return {Stage::kCompileError, "not compiled"};
}

}  // namespace kiln::conformance
