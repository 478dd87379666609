// One ONNX backend test case run end to end in-process: import the model,
// optimize at O3, lower to loop IR, run natively or interpret on the test's inputs and compare
// every output with the expected one. The result names the stage that failed.
#pragma once

#include <filesystem>
#include <string>

#include "engine/driver/run_model.h"

namespace kiln::conformance {

// Where a case stopped; kPassed when every output matched.
enum class Stage {
  kPassed,
  kUnsupportedOp,  // the importer has no converter for an op of the model
  kImportError,    // any other import failure (types, shapes, data)
  kCompileError,   // optimization or lowering failed
  kRunError,       // the interpreter or the native code reported an error
  kWrongResult,    // an output differs from the expected one
  kCrash,          // the isolated child died (signal, abort)
  kTimeout,        // the isolated child ran out of time
};
const char* StageName(Stage stage);  // "passed", "unsupported op", ...
bool ParseStageName(const std::string& name, Stage* stage);

struct CaseOutcome {
  Stage stage = Stage::kPassed;
  std::string message;  // one line: the error, or the first mismatch
  // True when the model compiled only with input specialization (see RunCase); `message` of a
  // passing case then says why it was needed (the first line of the unspecialized failure).
  bool specialized_inputs = false;
};

// Elementwise tolerance: |actual - expected| <= atol + rtol * |expected|;
// integers and bools must match exactly; NaN matches NaN.
struct Tolerance {
  double rtol = 1e-5;
  double atol = 1e-5;
};

// Runs the case in `dir` (holding model.onnx and test_data_set_*/) as native code (compiled
// for this machine and loaded with LLJIT) or with the loop-IR interpreter. The model is compiled
// with the test's input shapes; only when that fails is it compiled again with the test's input
// values given too (OnnxImportOptions::input_values: inputs an operator needs at compile time,
// such as Reshape's shape), and the outcome says so: specialization is a reported fallback.
CaseOutcome RunCase(const std::filesystem::path& dir, const Tolerance& tolerance,
                    driver::Backend backend = driver::Backend::kNative);

// The numerics check of a case (kiln-conformance --check_numerics): its model compiled at -O3
// with the drift of every graph pass measured against the model as imported, on the test's own
// inputs (engine/driver/numeric_drift.h). The first pass whose drift passes
// `tolerance` fails the case (wrong result), named with the first layer it changed; a module the
// interpreter cannot run after some pass fails it too (run error).
CaseOutcome CheckNumerics(const std::filesystem::path& dir, const Tolerance& tolerance);

}  // namespace kiln::conformance
