// What a compile returns besides timings: the artifacts a request asks for
// (graph IR text and JSON, loop IR, metadata), each with its digest, and the
// model's signature. Everything here is deterministic: equal compiles give
// byte-equal artifacts.
#pragma once

#include <string>

#include "absl/status/status.h"

#include "engine/driver/driver.h"
#include "kiln/v1/compiler.pb.h"

namespace kiln::service {

// Inputs and outputs of the optimized main: names, dtypes, shapes (-1 for a
// dimension known only at run time).
v1::ModelSignature ModelSignatureOf(const driver::CompileResult& result);

// Appends the artifacts `request` asks for (the IR ones when its list is empty) to
// `response`. `compile_id` goes into the metadata. A shared library is linked here, from the
// compile's object; a target it cannot be linked for is FailedPrecondition.
absl::Status AddArtifacts(const v1::CompileRequest& request, const driver::CompileResult& result,
                  const std::string& compile_id, v1::CompileResponse* response);

}  // namespace kiln::service
