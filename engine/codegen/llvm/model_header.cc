// ModelHeader: the per-model C header.
#include "engine/codegen/llvm/model_header.h"

#include <cctype>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "engine/loop/prim_func.h"

namespace kiln::codegen {

std::string ModelHeader(const lower::LoweredModule& lowered, const std::string& prefix,
                        int64_t workspace_bytes) {
  std::string upper = prefix;
  for (char& c : upper) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  std::string guard = absl::StrCat(upper, "_H_");
  std::string out = absl::StrCat(
      "/* ", prefix, ".h: a model compiled by Kiln. Link ", prefix,
      ".o with libkiln_rt (and -lmvec -lm -lpthread on x86-64 Linux).\n"
      " * Every buffer passed to ", prefix, "_run must be KILN_ALIGNMENT-aligned. */\n",
      "#ifndef ", guard, "\n#define ", guard, "\n\n#include \"kiln_runtime.h\"\n\n",
      "#ifdef __cplusplus\nextern \"C\" {\n#endif\n\n");
  BaseFunc main_base = lowered.module->Lookup("main");
  const auto* main = main_base.as<loop::PrimFuncNode>();
  auto describe = [&](const char* what, int first, int count) {
    absl::StrAppend(&out, "#define ", upper, "_NUM_", what, "S ", count, "\n");
    for (int i = first; main != nullptr && i < first + count; ++i) {
      const loop::Buffer& buffer = main->param_buffer(static_cast<size_t>(i));
      absl::StrAppend(&out, "/* ", what, " ", i - first, ": ", buffer->name, ", ",
                      DataTypeName(buffer->dtype), "[", absl::StrJoin(buffer->shape, ", "), "], ",
                      buffer->NumElements() * DataTypeBytes(buffer->dtype), " bytes */\n");
    }
  };
  describe("INPUT", 0, lowered.num_inputs);
  describe("OUTPUT", lowered.num_inputs, lowered.num_outputs);
  absl::StrAppend(&out, "#define ", upper, "_WORKSPACE_SIZE ", workspace_bytes, "\n\n");
  absl::StrAppend(
      &out,
      "/* Runs the model: inputs[i] and outputs[i] in the order above, workspace of ", upper,
      "_WORKSPACE_SIZE bytes.\n * Returns KILN_OK or a KILN_ERROR_* code. */\n",
      "int32_t ", prefix, "_run(void* const* inputs, void* const* outputs, void* workspace);\n",
      "int64_t ", prefix, "_workspace_size(void);\n", "int32_t ", prefix, "_num_inputs(void);\n",
      "int32_t ", prefix, "_num_outputs(void);\n", "const kiln_tensor_info* ", prefix,
      "_input_info(int32_t index);\n", "const kiln_tensor_info* ", prefix,
      "_output_info(int32_t index);\n\n", "#ifdef __cplusplus\n}\n#endif\n\n#endif /* ", guard,
      " */\n");
  return out;
}

}  // namespace kiln::codegen
