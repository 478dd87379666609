// The adapter from the API's CompileRequest to the engine: validation, the
// driver's options, the compile itself, and the compile id (the digest that
// names a compile's result in caches, on every replica).
#pragma once

#include <functional>
#include <string>

#include "absl/status/statusor.h"
#include "engine/driver/driver.h"
#include "kiln/v1/compiler.pb.h"

namespace kiln::service {

// The Kiln version compile ids and responses carry: the release and the build's source
// fingerprint, e.g. "0.1.0+3f2a9c1d0b7e" (service/source_fingerprint.h).
const char* KilnVersion();

// Hex SHA-256 of the request's canonical form and the Kiln version. The
// canonical form leaves out what does not change the compile: the model's
// display name and which artifacts to return (so a Compile, a TracePass and a
// GetScheduleRecord of one model share an id, and one cache entry). An empty
// target is replaced by the host's resolved triple, CPU and features.
std::string CompileId(const v1::CompileRequest& request);

// The code generator's target for a request's.
codegen::TargetOptions CodegenTargetOf(const v1::Target& target);

// The most sequence elements one request may declare (each is a parameter of the model).
inline constexpr int64_t kMaxSequenceInputElements = 4096;

// The driver's options for `request`; INVALID_ARGUMENT naming the field when
// a value is out of range.
absl::StatusOr<driver::CompileOptions> ToCompileOptions(const v1::CompileRequest& request);

// Imports (ONNX bytes or graph IR text) and compiles. Failures keep the
// engine's status (its code and message name the node, op and layer).
absl::StatusOr<driver::CompileResult> RunCompile(const v1::CompileRequest& request,
                                                 const driver::CompileOptions& options);

}  // namespace kiln::service
