// Runs an ONNX model through both backends for the operator tests: every output through the
// interpreter, after checking native code computes the same within float rounding (1e-6
// relative).
#pragma once

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "engine/driver/driver.h"
#include "engine/driver/run_model.h"

namespace kiln::driver {

// Main's outputs of `compiled` on `inputs` through one backend, or the run's error.
inline absl::StatusOr<std::vector<loop::HostTensor>> RunBackendTensors(
    const CompileResult& compiled, const std::vector<loop::HostTensor>& inputs, bool native) {
  ModelTensors tensors = MakeModelTensors(compiled);
  std::vector<loop::HostTensor*> in, out;
  for (size_t i = 0; i < inputs.size(); ++i) {
    tensors.inputs[i] = inputs[i];
    in.push_back(&tensors.inputs[i]);
  }
  for (loop::HostTensor& t : tensors.outputs) out.push_back(&t);
  absl::Status ran = native ? RunNative(compiled, in, out) : RunModel(compiled, in, out);
  if (!ran.ok()) return ran;
  return std::move(tensors.outputs);
}

// Every output of `compiled` on `inputs` through one backend, or the run's error.
inline absl::StatusOr<std::vector<std::vector<double>>> RunBackend(
    const CompileResult& compiled, const std::vector<loop::HostTensor>& inputs, bool native) {
  absl::StatusOr<std::vector<loop::HostTensor>> outputs = RunBackendTensors(compiled, inputs, native);
  if (!outputs.ok()) return outputs.status();
  std::vector<std::vector<double>> values;
  for (loop::HostTensor& t : *outputs) values.push_back(t.ToDoubles());
  return values;
}

// `model` compiled for both backends (native code for this host).
inline absl::StatusOr<CompileResult> CompileForAllBackends(const std::string& model) {
  CompileOptions options;
  options.codegen = HostCodegenOptions();
  absl::StatusOr<CompileResult> compiled = CompileOnnx(model, options);
  EXPECT_TRUE(compiled.ok()) << compiled.status();
  return compiled;
}

// Every output of `model` on `inputs` through the interpreter, after checking native code
// computes the same within float rounding.
inline std::vector<std::vector<double>> RunAll(const std::string& model,
                                               const std::vector<loop::HostTensor>& inputs) {
  absl::StatusOr<CompileResult> compiled = CompileForAllBackends(model);
  if (!compiled.ok()) return {};
  std::vector<std::vector<std::vector<double>>> results;
  for (bool native : {false, true}) {
    absl::StatusOr<std::vector<std::vector<double>>> values = RunBackend(*compiled, inputs, native);
    EXPECT_TRUE(values.ok()) << values.status();
    results.push_back(values.ok() ? *std::move(values) : std::vector<std::vector<double>>{});
  }
  EXPECT_EQ(results[1].size(), results[0].size());
  if (results[1].size() != results[0].size()) return results[0];
  for (size_t o = 0; o < results[0].size(); ++o) {
    EXPECT_EQ(results[1][o].size(), results[0][o].size()) << "output " << o;
    for (size_t i = 0; i < std::min(results[0][o].size(), results[1][o].size()); ++i) {
      double expected = results[0][o][i];
      if (std::isnan(expected)) {
        EXPECT_TRUE(std::isnan(results[1][o][i])) << "output " << o << ", element " << i;
        continue;
      }
      EXPECT_NEAR(results[1][o][i], expected, 1e-6 * std::max(1.0, std::abs(expected)))
          << "output " << o << ", element " << i;
    }
  }
  return results[0];
}

// The run's error on each backend (interpreter, then native code); both must fail with
// InvalidArgument (a run-time check of the model: the interpreter names the node, native code
// returns a kiln_status).
inline std::vector<absl::Status> RunFailures(const std::string& model,
                                             const std::vector<loop::HostTensor>& inputs) {
  absl::StatusOr<CompileResult> compiled = CompileForAllBackends(model);
  if (!compiled.ok()) return {};
  std::vector<absl::Status> failures;
  for (bool native : {false, true}) {
    absl::Status ran = RunBackend(*compiled, inputs, native).status();
    EXPECT_EQ(ran.code(), absl::StatusCode::kInvalidArgument) << ran;
    failures.push_back(ran);
  }
  return failures;
}

}  // namespace kiln::driver
