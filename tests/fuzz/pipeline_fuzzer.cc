// libFuzzer target: arbitrary text as a request's pass pipeline, against the
// real registry of builtin passes (their option parsers and factories); a
// pipeline that parses is printed back.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "engine/driver/driver.h"
#include "engine/pass/pipeline.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  kiln::driver::RegisteredPasses();
  std::string_view text(reinterpret_cast<const char*>(data), size);
  absl::StatusOr<kiln::Pass> pipeline = kiln::ParsePipeline(text);
  if (!pipeline.ok()) return 0;
  (void)kiln::PrintPipeline(*pipeline);
  return 0;
}
