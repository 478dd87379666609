// The sequence operators on sequences the importer can see whole: a sequence is a tuple of its
// tensors, known at import time (its length and every position must be constants: initializers,
// folded values, or inputs the caller gives values for), so SequenceAt reads a field,
// SequenceInsert and SequenceErase build a new tuple, SequenceLength is a constant,
// ConcatFromSequence a concatenate (of expanded tensors with new_axis) and SplitToSequence the
// slices of its input. A sequence graph input is typed by its element shapes
// (OnnxImportOptions::input_sequence_shapes), its length static like a tensor's shape.
#include <algorithm>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "engine/frontend/onnx/converter_table.h"
#include "engine/frontend/onnx/convert_context.h"
#include "engine/frontend/onnx/scalar_tensors.h"
#include "engine/support/status_macros.h"

namespace kiln::onnx_frontend {
namespace {

// The tensors of the sequence input `i`.
absl::StatusOr<std::vector<Expr>> Elements(ConvertContext& ctx, size_t i) {
  KILN_ASSIGN_OR_RETURN(Expr seq, ctx.Input(i));
  if (const auto* tuple = seq.as<TupleNode>()) return tuple->elements;
  const auto* type = seq->checked_type.as<TupleTypeNode>();
  if (type == nullptr) return ctx.Error(absl::StrCat("input ", i, " must be a sequence"));
  std::vector<Expr> elements;
  for (size_t k = 0; k < type->fields.size(); ++k) {
    KILN_ASSIGN_OR_RETURN(Expr e, ctx.TupleGetItem(seq, static_cast<int>(k)));
    elements.push_back(e);
  }
  return elements;
}

// The constant position input `i` (a scalar), checked against [-size, size - 1 + past_end]
// and made nonnegative; absent: `fallback`.
absl::StatusOr<int64_t> Position(ConvertContext& ctx, size_t i, int64_t size, bool past_end,
                                 int64_t fallback) {
  if (!ctx.HasInput(i)) return fallback;
  KILN_ASSIGN_OR_RETURN(std::vector<int64_t> values, ctx.ConstantInts(i, "position"));
  if (values.size() != 1) return ctx.Error("input 'position' must be a scalar");
  int64_t pos = values[0];
  int64_t high = past_end ? size : size - 1;
  if (pos < -size || pos > high) {
    return ctx.Error(absl::StrCat("position ", pos, " is outside [", -size, ", ", high,
                                  "] for a sequence of ", size, " tensors"));
  }
  return pos < 0 ? pos + size : pos;
}

absl::StatusOr<std::vector<Expr>> One(absl::StatusOr<Expr> e) {
  if (!e.ok()) return e.status();
  return std::vector<Expr>{*e};
}

absl::StatusOr<std::vector<Expr>> ConvertSequenceEmpty(ConvertContext& ctx) {
  return One(ctx.Tuple({}));
}

absl::StatusOr<std::vector<Expr>> ConvertSequenceConstruct(ConvertContext& ctx) {
  std::vector<Expr> elements;
  for (size_t i = 0; i < ctx.num_inputs(); ++i) {
    KILN_ASSIGN_OR_RETURN(Expr e, ctx.Input(i));
    KILN_RETURN_IF_ERROR(ctx.InputTensorType(i).status());
    elements.push_back(e);
  }
  return One(ctx.Tuple(std::move(elements)));
}

absl::StatusOr<std::vector<Expr>> ConvertSequenceInsert(ConvertContext& ctx) {
  KILN_ASSIGN_OR_RETURN(std::vector<Expr> elements, Elements(ctx, 0));
  KILN_ASSIGN_OR_RETURN(Expr tensor, ctx.Input(1));
  KILN_RETURN_IF_ERROR(ctx.InputTensorType(1).status());
  const int64_t size = static_cast<int64_t>(elements.size());
  KILN_ASSIGN_OR_RETURN(int64_t pos, Position(ctx, 2, size, true, size));
  elements.insert(elements.begin() + pos, tensor);
  return One(ctx.Tuple(std::move(elements)));
}

absl::StatusOr<std::vector<Expr>> ConvertSequenceErase(ConvertContext& ctx) {
  KILN_ASSIGN_OR_RETURN(std::vector<Expr> elements, Elements(ctx, 0));
  const int64_t size = static_cast<int64_t>(elements.size());
  if (size == 0) return ctx.Error("cannot erase from an empty sequence");
  KILN_ASSIGN_OR_RETURN(int64_t pos, Position(ctx, 1, size, false, size - 1));
  elements.erase(elements.begin() + pos);
  return One(ctx.Tuple(std::move(elements)));
}

absl::StatusOr<std::vector<Expr>> ConvertSequenceAt(ConvertContext& ctx) {
  KILN_ASSIGN_OR_RETURN(std::vector<Expr> elements, Elements(ctx, 0));
  const int64_t size = static_cast<int64_t>(elements.size());
  if (!ctx.HasInput(1)) return ctx.Error("input 'position' is required");
  KILN_ASSIGN_OR_RETURN(int64_t pos, Position(ctx, 1, size, false, 0));
  return std::vector<Expr>{elements[static_cast<size_t>(pos)]};
}

absl::StatusOr<std::vector<Expr>> ConvertSequenceLength(ConvertContext& ctx) {
  KILN_ASSIGN_OR_RETURN(std::vector<Expr> elements, Elements(ctx, 0));
  return std::vector<Expr>{
      ctx.Constant(ScalarTensor(DataType::kInt64, static_cast<double>(elements.size())))};
}

absl::StatusOr<std::vector<Expr>> ConvertConcatFromSequence(ConvertContext& ctx) {
  KILN_ASSIGN_OR_RETURN(std::vector<Expr> elements, Elements(ctx, 0));
  if (elements.empty()) return ctx.Error("cannot concatenate an empty sequence");
  KILN_ASSIGN_OR_RETURN(int64_t axis, ctx.IntAttr("axis", std::nullopt));
  KILN_ASSIGN_OR_RETURN(int64_t new_axis, ctx.IntAttr("new_axis", 0));
  const auto* first = elements[0]->checked_type.as<TensorTypeNode>();
  if (first == nullptr) return ctx.Error("the sequence must hold tensors");
  const int64_t rank = static_cast<int64_t>(first->shape.size()) + (new_axis != 0 ? 1 : 0);
  if (axis < -rank || axis >= rank) {
    return ctx.Error(absl::StrCat("attribute 'axis' is ", axis, ", outside [", -rank, ", ", rank,
                                  ")"));
  }
  if (axis < 0) axis += rank;
  if (new_axis != 0) {
    for (Expr& e : elements) {
      KILN_ASSIGN_OR_RETURN(e, ctx.Call("expand_dims", {e},
                                        MakeAttrs({{"axis", axis}, {"num_newaxis", int64_t{1}}})));
    }
  }
  if (elements.size() == 1) return std::vector<Expr>{elements[0]};
  return One(ctx.Call("concatenate", std::move(elements), MakeAttrs({{"axis", axis}})));
}

absl::StatusOr<std::vector<Expr>> ConvertSplitToSequence(ConvertContext& ctx) {
  KILN_ASSIGN_OR_RETURN(Expr x, ctx.Input(0));
  KILN_ASSIGN_OR_RETURN(const TensorTypeNode* tx, ctx.InputTensorType(0));
  const int64_t rank = static_cast<int64_t>(tx->shape.size());
  KILN_ASSIGN_OR_RETURN(int64_t axis, ctx.IntAttr("axis", 0));
  KILN_ASSIGN_OR_RETURN(int64_t keepdims, ctx.IntAttr("keepdims", 1));
  if (axis < -rank || axis >= rank) {
    return ctx.Error(absl::StrCat("attribute 'axis' is ", axis, ", outside [", -rank, ", ", rank,
                                  ")"));
  }
  if (axis < 0) axis += rank;
  if (!tx->shape[axis].is_static()) return ctx.Error("the split axis must have a static extent");
  const int64_t extent = tx->shape[axis].value;
  // The pieces' sizes: ones (no split), chunks of a scalar split (the last may be shorter), or
  // the 1-D split's sizes, which must add up to the extent.
  std::vector<int64_t> sizes;
  bool squeeze = false;
  // One graph node per piece: a declared extent may not make the importer build more nodes
  // than a graph may have.
  if (!ctx.HasInput(1) && extent > ctx.options().max_graph_nodes) {
    return ctx.Error(absl::StrCat("splitting an axis of ", extent, " into single slices is more than ",
                                  ctx.options().max_graph_nodes, " graph nodes"));
  }
  if (!ctx.HasInput(1)) {
    sizes.assign(static_cast<size_t>(extent), 1);
    squeeze = keepdims == 0;
  } else {
    KILN_ASSIGN_OR_RETURN(std::vector<int64_t> split, ctx.ConstantInts(1, "split"));
    KILN_ASSIGN_OR_RETURN(const TensorTypeNode* ts, ctx.InputTensorType(1));
    if (ts->shape.empty()) {
      if (split.size() != 1 || split[0] <= 0) return ctx.Error("a scalar 'split' must be positive");
      if (extent / split[0] > ctx.options().max_graph_nodes) {
        return ctx.Error("'split' makes more slices than a graph may have nodes");
      }
      for (int64_t at = 0; at < extent; at += split[0]) {
        sizes.push_back(std::min(split[0], extent - at));
      }
    } else {
      int64_t total = 0;
      for (int64_t s : split) {
        if (s < 0) return ctx.Error("'split' sizes must be nonnegative");
        total += s;
      }
      if (total != extent) {
        return ctx.Error(absl::StrCat("'split' sizes add up to ", total, ", the axis has ", extent));
      }
      sizes = split;
    }
  }
  std::vector<Expr> pieces;
  int64_t begin = 0;
  for (int64_t size : sizes) {
    KILN_ASSIGN_OR_RETURN(Expr piece, ctx.Call("strided_slice", {x},
                                               MakeAttrs({{"begin", IntArray({begin})},
                                                          {"end", IntArray({begin + size})},
                                                          {"strides", IntArray({1})},
                                                          {"axes", IntArray({axis})}})));
    if (squeeze) {
      KILN_ASSIGN_OR_RETURN(piece, ctx.Call("squeeze", {piece}, MakeAttrs({{"axis", IntArray({axis})}})));
    }
    pieces.push_back(piece);
    begin += size;
  }
  return One(ctx.Tuple(std::move(pieces)));
}

}  // namespace

void RegisterSequenceConverters(ConverterTable& table) {
  table.Add("SequenceEmpty", ConvertSequenceEmpty);
  table.Add("SequenceConstruct", ConvertSequenceConstruct);
  table.Add("SequenceInsert", ConvertSequenceInsert);
  table.Add("SequenceErase", ConvertSequenceErase);
  table.Add("SequenceAt", ConvertSequenceAt);
  table.Add("SequenceLength", ConvertSequenceLength);
  table.Add("ConcatFromSequence", ConvertConcatFromSequence);
  table.Add("SplitToSequence", ConvertSplitToSequence);
}

}  // namespace kiln::onnx_frontend
