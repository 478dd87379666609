// One ONNX backend test case run end to end in-process: import the model,
// optimize at O3, lower to loop IR, interpret on the test's inputs and compare
// every output with the expected one. The result names the stage that failed.
#pragma once

#include <filesystem>
#include <string>

namespace kiln::conformance {

// Where a case stopped; kPassed when every output matched.
enum class Stage {
  kPassed,
  kUnsupportedOp,  // the importer has no converter for an op of the model
  kImportError,    // any other import failure (types, shapes, data)
  kCompileError,   // optimization or lowering failed
  kRunError,       // the interpreter reported an error
  kWrongResult,    // an output differs from the expected one
  kCrash,          // the isolated child died (signal, abort)
  kTimeout,        // the isolated child ran out of time
};
const char* StageName(Stage stage);  // "passed", "unsupported op", ...
bool ParseStageName(const std::string& name, Stage* stage);

struct CaseOutcome {
  Stage stage = Stage::kPassed;
  std::string message;  // one line: the error, or the first mismatch
};

// Elementwise tolerance: |actual - expected| <= atol + rtol * |expected|;
// integers and bools must match exactly; NaN matches NaN.
struct Tolerance {
  double rtol = 1e-5;
  double atol = 1e-5;
};

// Runs the case in `dir` (holding model.onnx and test_data_set_*/).
CaseOutcome RunCase(const std::filesystem::path& dir, const Tolerance& tolerance);

}  // namespace kiln::conformance
