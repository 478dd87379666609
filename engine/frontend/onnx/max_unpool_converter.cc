// MaxUnpool as graph ops: each input value scattered to the flat position its index names in a
// zero tensor of the shape MaxPool's attributes imply ((in - 1) * stride - pads + kernel per
// spatial axis), then, with an output_shape input, zero-padded at the end of each axis up to
// that shape (the ONNX reference's semantics: indices address the implied shape, not the
// requested one). The indices are MaxPool's Indices output, flat over N x C x spatial dims.
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "engine/frontend/onnx/converter_table.h"
#include "engine/frontend/onnx/convert_context.h"
#include "engine/frontend/onnx/scalar_tensors.h"
#include "engine/frontend/onnx/shape_guards.h"
#include "engine/op/type_relations.h"
#include "engine/support/status_macros.h"

namespace kiln::onnx_frontend {
namespace {

// The largest kernel, stride or pad taken: keeps the shape arithmetic far from overflow (the
// element limit then bounds the product).
constexpr int64_t kMaxWindowAttr = int64_t{1} << 24;

absl::StatusOr<std::vector<Expr>> ConvertMaxUnpool(ConvertContext& ctx) {
  KILN_ASSIGN_OR_RETURN(Expr x, ctx.Input(0));
  KILN_ASSIGN_OR_RETURN(Expr indices, ctx.Input(1));
  KILN_ASSIGN_OR_RETURN(const TensorTypeNode* tx, ctx.InputTensorType(0));
  KILN_ASSIGN_OR_RETURN(const TensorTypeNode* ti, ctx.InputTensorType(1));
  const size_t rank = tx->shape.size();
  if (rank < 3) return ctx.Error(absl::StrCat("input 0 must have rank 3 or more, got ", rank));
  if (ti->shape != tx->shape || ti->dtype != DataType::kInt64) {
    return ctx.Error(absl::StrCat("input 1 (I) must be int64 of input 0's shape ",
                                  ShapeToString(tx->shape), ", got ", DataTypeName(ti->dtype),
                                  ShapeToString(ti->shape)));
  }
  std::vector<int64_t> in;
  for (const Dim& d : tx->shape) {
    if (!d.is_static() || d.value < 1 || d.value > ctx.options().max_tensor_elements) {
      return ctx.Error(absl::StrCat("input 0 must have a static shape of extents in [1, ",
                                    ctx.options().max_tensor_elements, "]"));
    }
    in.push_back(d.value);
  }
  const size_t spatial = rank - 2;
  KILN_ASSIGN_OR_RETURN(std::vector<int64_t> kernel, ctx.IntsAttr("kernel_shape", std::nullopt));
  KILN_ASSIGN_OR_RETURN(std::vector<int64_t> strides,
                        ctx.IntsAttr("strides", std::vector<int64_t>(spatial, 1)));
  KILN_ASSIGN_OR_RETURN(std::vector<int64_t> pads,
                        ctx.IntsAttr("pads", std::vector<int64_t>(2 * spatial, 0)));
  if (kernel.size() != spatial || strides.size() != spatial || pads.size() != 2 * spatial) {
    return ctx.Error(absl::StrCat("expected ", spatial, " kernel_shape and strides values and ",
                                  2 * spatial, " pads for input 0 of rank ", rank));
  }
  std::vector<int64_t> implied = {in[0], in[1]};
  for (size_t i = 0; i < spatial; ++i) {
    for (int64_t v : {kernel[i], strides[i], pads[i], pads[spatial + i]}) {
      if (v < 0 || v > kMaxWindowAttr) {
        return ctx.Error(absl::StrCat("kernel_shape, strides and pads must lie in [0, ",
                                      kMaxWindowAttr, "], got ", v));
      }
    }
    int64_t extent = (in[i + 2] - 1) * strides[i] - (pads[i] + pads[spatial + i]) + kernel[i];
    if (extent < 1) {
      return ctx.Error(absl::StrCat("spatial axis ", i, " unpools to extent ", extent));
    }
    implied.push_back(extent);
  }
  int64_t count = 1, total = 1;
  for (size_t i = 0; i < rank; ++i) {
    count *= in[i];
    if (total > ctx.options().max_tensor_elements / implied[i]) {
      return ctx.Error(absl::StrCat("the unpooled tensor (", absl::StrJoin(implied, ", "),
                                    ") has more than ", ctx.options().max_tensor_elements,
                                    " elements"));
    }
    total *= implied[i];
  }

  std::vector<int64_t> output = implied;
  // An output_shape known only at run time: the declared output shape, checked.
  std::optional<OperandRule> runtime_output_shape;
  if (KnownOnlyAtRunTime(ctx, 2)) {
    KILN_ASSIGN_OR_RETURN(output, DeclaredShapeOrError(ctx, 0, 2, "output_shape"));
    KILN_ASSIGN_OR_RETURN(runtime_output_shape, ExactShapeRule(ctx, 2, "output_shape", output));
  } else if (ctx.HasInput(2)) {
    KILN_ASSIGN_OR_RETURN(output, ctx.ConstantInts(2, "output_shape"));
  }
  if (ctx.HasInput(2)) {
    bool fits = output.size() == rank && output[0] == in[0] && output[1] == in[1];
    for (size_t i = 2; fits && i < rank; ++i) fits = output[i] >= implied[i];
    int64_t requested = 1;
    for (size_t i = 0; fits && i < rank; ++i) {
      fits = output[i] <= ctx.options().max_tensor_elements / requested;
      requested *= output[i];
    }
    if (!fits) {
      return ctx.Error(absl::StrCat(
          "input 2 (output_shape) is (", absl::StrJoin(output, ", "), "); expected input 0's N and C (",
          in[0], ", ", in[1], ") and spatial extents at least the implied (",
          absl::StrJoin(implied, ", "), "), within ", ctx.options().max_tensor_elements,
          " elements"));
    }
  }

  Expr zero = ctx.Constant(ScalarTensor(tx->dtype, 0));
  KILN_ASSIGN_OR_RETURN(Expr zeros, ctx.Call("broadcast_to", {zero},
                                             MakeAttrs({{"shape", ShapeValue{{Dim::Static(total)}}}})));
  auto flat = [&](const Expr& e) {
    return ctx.Call("reshape", {e}, MakeAttrs({{"newshape", IntArray({count})}}));
  };
  KILN_ASSIGN_OR_RETURN(Expr flat_indices, flat(indices));
  KILN_ASSIGN_OR_RETURN(Expr flat_values, flat(x));
  KILN_ASSIGN_OR_RETURN(Expr scattered,
                        ctx.Call("scatter_elements", {zeros, flat_indices, flat_values},
                                 MakeAttrs({{"axis", int64_t{0}}, {"reduction", std::string("none")}})));
  KILN_ASSIGN_OR_RETURN(Expr out,
                        ctx.Call("reshape", {scattered}, MakeAttrs({{"newshape", IntArray(implied)}})));
  if (output != implied) {
    std::vector<int64_t> width(2 * rank, 0);  // all begins, then all ends
    for (size_t i = 0; i < rank; ++i) width[rank + i] = output[i] - implied[i];
    KILN_ASSIGN_OR_RETURN(out, ctx.Call("nn.pad", {out, zero},
                                        MakeAttrs({{"pad_width", IntArray(width)},
                                                   {"pad_mode", std::string("constant")}})));
  }
  if (runtime_output_shape) {
    KILN_ASSIGN_OR_RETURN(out, GuardOperand(ctx, out, 2, *runtime_output_shape,
                                            absl::StrCat("be ", DimsString(output))));
  }
  return std::vector<Expr>{out};
}

}  // namespace

void RegisterMaxUnpoolConverter(ConverterTable& table) { table.Add("MaxUnpool", ConvertMaxUnpool); }

}  // namespace kiln::onnx_frontend
