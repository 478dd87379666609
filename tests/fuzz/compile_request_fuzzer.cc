// libFuzzer target: a whole CompileRequest as kilnd handles it, in process:
// the bytes parsed as the API's proto (model bytes or graph text, pass
// options, pipeline, config, input shapes), validated, compiled by the
// driver with kilnd's production limits (the default compile budget), and
// its artifacts printed. Like kilnd, each input gets a deadline (5 s): past
// it the compile must stop. Crashes, sanitizer reports, allocations past the
// budget and compiles that ignore their deadline are bugs.
#include <chrono>
#include <cstddef>
#include <cstdint>

#include "google/protobuf/stubs/logging.h"
#include "kiln/v1/compiler.pb.h"
#include "service/artifacts.h"
#include "service/compile_request.h"

// Protobuf logs every string field that is not UTF-8: millions of lines.
extern "C" int LLVMFuzzerInitialize(int*, char***) {
  google::protobuf::SetLogHandler(nullptr);
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  kiln::v1::CompileRequest request;
  if (!request.ParseFromArray(data, static_cast<int>(size))) return 0;
  absl::StatusOr<kiln::driver::CompileOptions> options = kiln::service::ToCompileOptions(request);
  if (!options.ok()) return 0;
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
  options->is_cancelled = [deadline] { return std::chrono::steady_clock::now() >= deadline; };
  absl::StatusOr<kiln::driver::CompileResult> result =
      kiln::service::RunCompile(request, *options);
  if (!result.ok()) return 0;
  kiln::v1::CompileResponse response;
  kiln::service::AddArtifacts(request, *result, "fuzz", &response);
  return 0;
}
