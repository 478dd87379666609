// ModelHeader: the per-model C header.
#include "engine/codegen/llvm/model_header.h"

#include <cctype>
#include <optional>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "engine/loop/prim_func.h"

namespace kiln::codegen {
namespace {
// A name from the model inside a C comment: "*/" would end it.
std::string CommentText(std::string text) {
  for (size_t at = text.find("*/"); at != std::string::npos; at = text.find("*/", at)) {
    text.replace(at, 2, "* /");
  }
  return text;
}
}  // namespace


std::string ModelHeader(const lower::LoweredModule& lowered, const std::string& prefix,
                        int64_t workspace_bytes) {
  std::string upper = prefix;
  for (char& c : upper) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  std::string guard = absl::StrCat(upper, "_H_");
  std::string out = absl::StrCat(
      "/* ", prefix, ".h: a model compiled by Kiln. Link ", prefix,
      ".o with libkiln_rt (and -lmvec -lm -lpthread on x86-64 Linux).\n"
      " * Every buffer passed to ", prefix,
      lowered.sample_batch || lowered.symbolic ? "_run_dynamic" : "_run",
      " must be KILN_ALIGNMENT-aligned. */\n",
      "#ifndef ", guard, "\n#define ", guard, "\n\n#include \"kiln_runtime.h\"\n\n",
      "#ifdef __cplusplus\nextern \"C\" {\n#endif\n\n");
  BaseFunc main_base = lowered.module->Lookup("main");
  const auto* main = main_base.as<loop::PrimFuncNode>();
  const std::optional<lower::SampleBatch>& batch = lowered.sample_batch;
  const std::optional<lower::SymbolicSignature>& symbolic = lowered.symbolic;
  auto describe = [&](const char* what, int first, int count, const std::vector<bool>* batched) {
    absl::StrAppend(&out, "#define ", upper, "_NUM_", what, "S ", count, "\n");
    for (int i = first; main != nullptr && i < first + count; ++i) {
      const loop::Buffer& buffer = main->param_buffer(static_cast<size_t>(i));
      if (symbolic) {  // dims by symbol name
        const std::vector<int64_t>& dims = first == 0 ? symbolic->input_dims[i - first]
                                                      : symbolic->output_dims[i - first];
        std::vector<std::string> parts;
        for (int64_t d : dims) {
          parts.push_back(d >= 0 ? absl::StrCat(d) : CommentText(symbolic->symbols[-1 - d]));
        }
        absl::StrAppend(&out, "/* ", what, " ", i - first, ": ", buffer->name, ", ",
                        DataTypeName(buffer->dtype), "[", absl::StrJoin(parts, ", "), "] */\n");
        continue;
      }
      int64_t bytes = buffer->NumElements() * DataTypeBytes(buffer->dtype);
      if (batched != nullptr && (*batched)[static_cast<size_t>(i - first)]) {
        std::vector<int64_t> rest(buffer->shape.begin() + 1, buffer->shape.end());
        absl::StrAppend(&out, "/* ", what, " ", i - first, ": ", buffer->name, ", ",
                        DataTypeName(buffer->dtype), "[", batch->symbol,
                        rest.empty() ? "" : ", ", absl::StrJoin(rest, ", "), "], ", bytes,
                        " bytes per sample */\n");
      } else {
        absl::StrAppend(&out, "/* ", what, " ", i - first, ": ", buffer->name, ", ",
                        DataTypeName(buffer->dtype), "[", absl::StrJoin(buffer->shape, ", "),
                        "], ", bytes, " bytes */\n");
      }
    }
  };
  describe("INPUT", 0, lowered.num_inputs, batch ? &batch->inputs : nullptr);
  describe("OUTPUT", lowered.num_inputs, lowered.num_outputs, batch ? &batch->outputs : nullptr);
  for (const lower::BoundedOutput& bounded : lowered.bounded_outputs) {
    absl::StrAppend(&out, "/* output ", bounded.output, " is bounded: a run fills the first n ",
                    "entries of its axis ", bounded.axis, ", n the int64 in output ",
                    bounded.length, "; the rest is padding */\n");
  }
  absl::StrAppend(&out, "#define ", upper, "_WORKSPACE_SIZE ", workspace_bytes, "\n\n");
  if (symbolic) {
    absl::StrAppend(
        &out, "/* Runs the model for any values of its symbols (",
        CommentText(absl::StrJoin(symbolic->symbols, ", ")),
        "), which the inputs' shapes give:\n"
        " * input_shapes[i] holds input i's dimensions, outputs[i] receives a kiln_rt_alloc buffer the\n"
        " * caller releases with kiln_rt_free, output_shapes[i] its dimensions; values between\n"
        " * kernels whose size depends on a symbol are allocated for the run, the workspace is ",
        upper, "_WORKSPACE_SIZE\n * bytes. Returns KILN_OK or a KILN_ERROR_* code. */\n",
        "int32_t ", prefix,
        "_run_dynamic(void* const* inputs, const int64_t* const* input_shapes, void** outputs,\n"
        "    int64_t* const* output_shapes, void* workspace);\n");
  } else if (batch) {
    absl::StrAppend(
        &out, "/* Runs the model on a batch of any size ", batch->symbol,
        " (axis 0 of the tensors above that have it; the model is compiled per sample):\n"
        " * input_shapes[i] holds input i's dimensions, outputs[i] receives a kiln_rt_alloc buffer the\n"
        " * caller releases with kiln_rt_free, output_shapes[i] its dimensions; the workspace is ",
        upper, "_WORKSPACE_SIZE\n * bytes whatever the batch. Returns KILN_OK or a KILN_ERROR_* code. */\n",
        "int32_t ", prefix,
        "_run_dynamic(void* const* inputs, const int64_t* const* input_shapes, void** outputs,\n"
        "    int64_t* const* output_shapes, void* workspace);\n");
  } else {
    absl::StrAppend(
        &out, "/* Runs the model: inputs[i] and outputs[i] in the order above, workspace of ", upper,
        "_WORKSPACE_SIZE bytes.\n * Returns KILN_OK or a KILN_ERROR_* code. */\n", "int32_t ",
        prefix, "_run(void* const* inputs, void* const* outputs, void* workspace);\n");
  }
  absl::StrAppend(
      &out,
      "int64_t ", prefix, "_workspace_size(void);\n", "int32_t ", prefix, "_num_inputs(void);\n",
      "int32_t ", prefix, "_num_outputs(void);\n", "const kiln_tensor_info* ", prefix,
      "_input_info(int32_t index);\n", "const kiln_tensor_info* ", prefix,
      "_output_info(int32_t index);\n\n", "#ifdef __cplusplus\n}\n#endif\n\n#endif /* ", guard,
      " */\n");
  return out;
}

}  // namespace kiln::codegen
