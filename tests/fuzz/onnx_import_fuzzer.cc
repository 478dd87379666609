// libFuzzer target: arbitrary bytes into the ONNX importer. Any input must
// give a module or an error status; crashes, hangs, sanitizer reports and
// runaway allocations are bugs. Limits are set low so hostile sizes are
// rejected by validation, which is what this exercises.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "engine/frontend/onnx/importer.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  kiln::OnnxImportOptions options;
  options.max_tensor_elements = 1 << 20;
  options.max_graph_nodes = 10'000;
  auto module = kiln::ImportOnnxModel(
      std::string_view(reinterpret_cast<const char*>(data), size), options);
  (void)module;
  return 0;
}
