// The sequence operators on sequences the importer can see whole: a sequence is a tuple of its
// tensors, its length known at import time, so SequenceAt reads a field, SequenceInsert and
// SequenceErase build a new tuple (a position only a run knows picks among tensors of one type
// with `where`s, the run failing for a position out of range), SequenceLength is a constant,
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
#include "engine/frontend/onnx/shape_guards.h"
#include "engine/ir/structural_equal.h"
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

// A position only a run knows (input `i`, one integer): an int64 scalar made nonnegative, the
// run failing unless it lies in [-size, size - 1 + past_end].
absl::StatusOr<Expr> RuntimePosition(ConvertContext& ctx, size_t i, int64_t size, bool past_end) {
  KILN_ASSIGN_OR_RETURN(Expr value, ctx.Input(i));
  KILN_ASSIGN_OR_RETURN(const TensorTypeNode* type, ctx.InputTensorType(i));
  if (!IsSignedInt(type->dtype) && !IsUnsignedInt(type->dtype)) {
    return ctx.Error("input 'position' must be an integer");
  }
  KILN_ASSIGN_OR_RETURN(Expr pos, OneElementAsScalar(ctx, value, DataType::kInt64, "position"));
  const int64_t high = past_end ? size : size - 1;
  auto int64 = [&](int64_t v) { return ctx.Constant(ScalarTensor(DataType::kInt64, static_cast<double>(v))); };
  KILN_ASSIGN_OR_RETURN(Expr low_ok, ctx.Call("greater_equal", {pos, int64(-size)}));
  KILN_ASSIGN_OR_RETURN(Expr high_ok, ctx.Call("less_equal", {pos, int64(high)}));
  KILN_ASSIGN_OR_RETURN(Expr within, ctx.Call("logical_and", {low_ok, high_ok}));
  KILN_ASSIGN_OR_RETURN(pos, GuardCondition(ctx, pos, within,
                                            absl::StrCat("position (input ", i, ") must lie in [",
                                                         -size, ", ", high, "] for a sequence of ",
                                                         size, " tensors")));
  KILN_ASSIGN_OR_RETURN(Expr negative, ctx.Call("less", {pos, int64(0)}));
  // -size .. -1 count from the end (an insertion at -1 goes before the last tensor, as Python's
  // list.insert, the ONNX reference, does).
  KILN_ASSIGN_OR_RETURN(Expr wrapped, ctx.Call("add", {pos, int64(size)}));
  return ctx.Call("where", {negative, wrapped, pos});
}

// The sequence's tensors when a run picks among them: all of one type (else an error naming
// `what`, which needs the position at import).
absl::Status ExpectOneType(ConvertContext& ctx, const std::vector<Expr>& tensors,
                           const char* what) {
  for (const Expr& t : tensors) {
    if (!t->checked_type.as<TensorTypeNode>() ||
        !StructuralEqual(t->checked_type, tensors[0]->checked_type)) {
      return ctx.Error(absl::StrCat(
          "input 'position' is known only at run time, so ", what,
          " needs every tensor of the sequence of one type (make the position a constant)"));
    }
  }
  return absl::OkStatus();
}

// candidates[pos] for a run-time position in [0, candidates.size()): a balanced tree of
// `where`s on pos, log2 of the count deep.
absl::StatusOr<Expr> PickAt(ConvertContext& ctx, const Expr& pos, const std::vector<Expr>& candidates,
                            size_t lo, size_t hi) {
  if (hi - lo == 1) return candidates[lo];
  size_t mid = lo + (hi - lo) / 2;
  KILN_ASSIGN_OR_RETURN(
      Expr before, ctx.Call("less", {pos, ctx.Constant(ScalarTensor(DataType::kInt64, static_cast<double>(mid)))}));
  KILN_ASSIGN_OR_RETURN(Expr left, PickAt(ctx, pos, candidates, lo, mid));
  KILN_ASSIGN_OR_RETURN(Expr right, PickAt(ctx, pos, candidates, mid, hi));
  return ctx.Call("where", {before, left, right});
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
  if (KnownOnlyAtRunTime(ctx, 2)) {
    // Slot k holds element k before the position, the tensor at it, element k - 1 after it.
    std::vector<Expr> all = elements;
    all.push_back(tensor);
    KILN_RETURN_IF_ERROR(ExpectOneType(ctx, all, "SequenceInsert"));
    KILN_ASSIGN_OR_RETURN(Expr pos, RuntimePosition(ctx, 2, size, true));
    std::vector<Expr> slots;
    for (int64_t k = 0; k <= size; ++k) {
      std::vector<Expr> choices;  // by pos: < k, == k, > k
      choices.push_back(k > 0 ? elements[k - 1] : tensor);
      choices.push_back(tensor);
      choices.push_back(k < size ? elements[k] : tensor);
      // pos - k + 1 is 0 (pos < k), 1 (pos == k) or 2 (pos > k) once clamped into [0, 2].
      KILN_ASSIGN_OR_RETURN(Expr offset, ctx.Call("subtract", {pos, ctx.Constant(ScalarTensor(DataType::kInt64, static_cast<double>(k - 1)))}));
      KILN_ASSIGN_OR_RETURN(offset, ctx.Call("clip", {offset}, MakeAttrs({{"a_min", 0.0}, {"a_max", 2.0}})));
      KILN_ASSIGN_OR_RETURN(Expr slot, PickAt(ctx, offset, choices, 0, 3));
      slots.push_back(slot);
    }
    return One(ctx.Tuple(std::move(slots)));
  }
  KILN_ASSIGN_OR_RETURN(int64_t pos, Position(ctx, 2, size, true, size));
  elements.insert(elements.begin() + pos, tensor);
  return One(ctx.Tuple(std::move(elements)));
}

absl::StatusOr<std::vector<Expr>> ConvertSequenceErase(ConvertContext& ctx) {
  KILN_ASSIGN_OR_RETURN(std::vector<Expr> elements, Elements(ctx, 0));
  const int64_t size = static_cast<int64_t>(elements.size());
  if (size == 0) return ctx.Error("cannot erase from an empty sequence");
  if (ctx.HasInput(1) && KnownOnlyAtRunTime(ctx, 1)) {
    // Slot k holds element k before the position, element k + 1 from it on.
    KILN_RETURN_IF_ERROR(ExpectOneType(ctx, elements, "SequenceErase"));
    KILN_ASSIGN_OR_RETURN(Expr pos, RuntimePosition(ctx, 1, size, false));
    std::vector<Expr> slots;
    for (int64_t k = 0; k + 1 < size; ++k) {
      KILN_ASSIGN_OR_RETURN(Expr after, ctx.Call("greater", {pos, ctx.Constant(ScalarTensor(DataType::kInt64, static_cast<double>(k)))}));
      KILN_ASSIGN_OR_RETURN(Expr slot, ctx.Call("where", {after, elements[k], elements[k + 1]}));
      slots.push_back(slot);
    }
    return One(ctx.Tuple(std::move(slots)));
  }
  KILN_ASSIGN_OR_RETURN(int64_t pos, Position(ctx, 1, size, false, size - 1));
  elements.erase(elements.begin() + pos);
  return One(ctx.Tuple(std::move(elements)));
}

absl::StatusOr<std::vector<Expr>> ConvertSequenceAt(ConvertContext& ctx) {
  KILN_ASSIGN_OR_RETURN(std::vector<Expr> elements, Elements(ctx, 0));
  const int64_t size = static_cast<int64_t>(elements.size());
  if (!ctx.HasInput(1)) return ctx.Error("input 'position' is required");
  if (KnownOnlyAtRunTime(ctx, 1)) {
    if (size == 0) return ctx.Error("cannot read from an empty sequence");
    KILN_RETURN_IF_ERROR(ExpectOneType(ctx, elements, "SequenceAt"));
    KILN_ASSIGN_OR_RETURN(Expr pos, RuntimePosition(ctx, 1, size, false));
    return One(PickAt(ctx, pos, elements, 0, elements.size()));
  }
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
