// Converters for ONNX's layout and shape operators: Reshape, Flatten,
// Transpose, Concat, Split, Slice, Squeeze, Unsqueeze, Expand and Tile.
// Inputs that ONNX moved from attributes to tensors (Reshape's shape, Slice's
// bounds, Split's sizes, Squeeze/Unsqueeze axes) must be known at import:
// constants, or shape arithmetic that shape_folding.h can evaluate. When all
// of a node's inputs are small integer constants its result folds to a
// constant.
#include "engine/frontend/onnx/transform_converters.h"

#include <algorithm>
#include <optional>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "engine/frontend/onnx/shape_folding.h"
#include "engine/frontend/onnx/shape_guards.h"
#include "engine/ir/dtype_dispatch.h"
#include "engine/op/type_relations.h"
#include "engine/support/status_macros.h"

namespace kiln::onnx_frontend {

absl::StatusOr<std::optional<std::vector<int64_t>>> IntsFromInputOrAttr(const ConvertContext& ctx,
                                                                        size_t input,
                                                                        const std::string& attr,
                                                                        const char* what) {
  if (ctx.HasInput(input)) return ctx.ConstantInts(input, what);
  if (ctx.HasAttr(attr)) return ctx.IntsAttr(attr, std::nullopt);
  return std::nullopt;
}

absl::StatusOr<int64_t> ConstantScalarInt(const ConvertContext& ctx, size_t input,
                                          const char* what) {
  TensorData data = ctx.ConstantInput(input);
  if (!data) {
    return ctx.Error(absl::StrCat("input ", input, " (", what, ") must be a constant"));
  }
  if (data->NumElements() != 1) {
    return ctx.Error(absl::StrCat("input ", input, " (", what, ") must hold one value, got ",
                                  data->NumElements()));
  }
  // Integers and float32/float64 convert as static_cast does (floats truncate).
  std::optional<int64_t> value =
      DispatchDataType(data->dtype, [&]<DataType D>() -> std::optional<int64_t> {
        if constexpr (D == DataType::kFloat16 || D == DataType::kBFloat16 ||
                      D == DataType::kBool) {
          return std::nullopt;
        } else {
          return static_cast<int64_t>(*data->data<DataTypeStorage<D>>());
        }
      });
  if (value.has_value()) return *value;
  return ctx.Error(absl::StrCat("input ", input, " (", what, ") has unsupported dtype ",
                                DataTypeName(data->dtype)));
}

absl::StatusOr<Expr> Flattened(ConvertContext& ctx, const Expr& x) {
  return ctx.Call("reshape", {x}, MakeAttrs({{"newshape", IntArray({-1})}}));
}

namespace {

std::string ElementToString(const ShapeElement& e) {
  if (e.known) return absl::StrCat(e.value);
  return e.symbol.empty() ? "?" : e.symbol;
}

// ONNX Reshape's target -> reshape's newshape. A 0 copies the input's extent
// at that position (unless allowzero); a -1 is inferred. Entries known only
// at run time (symbolic dims) are allowed while at most one extent stays
// open: it becomes the op's one -1. A -1 is computed here when every symbolic
// input dim reappears in the target (copied by a 0, or named by shape
// arithmetic on Shape), since the symbolic factors then cancel.
absl::StatusOr<std::vector<int64_t>> ResolveReshapeTarget(const ConvertContext& ctx,
                                                          const TensorTypeNode* in,
                                                          const std::vector<ShapeElement>& target,
                                                          bool allowzero) {
  const int64_t rank = static_cast<int64_t>(in->shape.size());
  std::vector<int64_t> out;
  std::vector<size_t> open;  // entries left as -1
  std::vector<bool> carried(rank, false);
  int infer = -1;
  bool unknown = false;
  for (size_t i = 0; i < target.size(); ++i) {
    const ShapeElement& e = target[i];
    if (e.known && e.value == 0 && !allowzero) {
      if (static_cast<int64_t>(i) >= rank) {
        return ctx.Error(absl::StrCat("shape[", i, "] is 0 (copy the input extent) but the input ",
                                      "has rank ", rank));
      }
      if (in->shape[i].is_static()) {
        out.push_back(in->shape[i].value);
        continue;
      }
      carried[i] = true;
    } else if (e.known && e.value == -1) {
      if (infer >= 0) return ctx.Error("shape has more than one -1");
      infer = static_cast<int>(i);
    } else if (e.known && e.value < -1) {
      return ctx.Error(absl::StrCat("shape[", i, "] = ", e.value, " is not a valid extent"));
    } else if (e.known) {
      out.push_back(e.value);
      continue;
    } else {
      int match = -1;
      for (int64_t p = 0; p < rank && !e.symbol.empty(); ++p) {
        if (!in->shape[p].is_static() && in->shape[p].symbol == e.symbol) {
          match = match == -1 ? static_cast<int>(p) : -2;
        }
      }
      if (match >= 0) {
        carried[match] = true;
      } else {
        unknown = true;
      }
    }
    open.push_back(out.size());
    out.push_back(-1);
  }
  if (infer >= 0 && !unknown) {
    bool all_carried = true;
    std::vector<Dim> static_in;
    for (int64_t p = 0; p < rank; ++p) {
      if (in->shape[p].is_static()) {
        static_in.push_back(in->shape[p]);
      } else {
        all_carried &= carried[p];
      }
    }
    if (all_carried) {
      std::vector<Dim> known_out;
      for (int64_t v : out) {
        if (v >= 0) known_out.push_back(Dim::Static(v));
      }
      auto in_count = NumElements(static_in);
      auto known = NumElements(known_out);
      if (!in_count.ok()) return ctx.Error(in_count.status().message());
      if (!known.ok()) return ctx.Error(known.status().message());
      if (*known == 0 || *in_count % *known != 0) {
        return ctx.Error(absl::StrCat("cannot reshape ", ShapeToString(in->shape), " to ",
                                      absl::StrJoin(target, ", ",
                                                    [](std::string* s, const ShapeElement& e) {
                                                      s->append(ElementToString(e));
                                                    }),
                                      ": the -1 extent does not divide the element count"));
      }
      out[infer] = *in_count / *known;
      open.erase(std::find(open.begin(), open.end(), static_cast<size_t>(infer)));
    }
  }
  if (open.size() > 1) {
    return ctx.Error(absl::StrCat(
        "the target shape (",
        absl::StrJoin(target, ", ",
                      [](std::string* s, const ShapeElement& e) { s->append(ElementToString(e)); }),
        ") of input ", ShapeToString(in->shape), " has ", open.size(),
        " extents known only at run time; reshape infers at most one (give the model static "
        "input shapes, e.g. with an input shape override)"));
  }
  return out;
}

// Reshape whose shape input is known only at run time: to the shape the model declares, with a
// run-time check that the input gives it (element i is that extent, 0 where that copies the
// input's extent, or the one -1 inferred as it).
absl::StatusOr<std::vector<Expr>> ReshapeToDeclaredShape(ConvertContext& ctx, const Expr& x,
                                                         const TensorTypeNode* in) {
  KILN_ASSIGN_OR_RETURN(std::vector<int64_t> declared, DeclaredShapeOrError(ctx, 0, 1, "shape"));
  KILN_ASSIGN_OR_RETURN(const TensorTypeNode* shape_type, ctx.InputTensorType(1));
  if (shape_type->shape.size() != 1 || !shape_type->shape[0].is_static() ||
      shape_type->shape[0].value != static_cast<int64_t>(declared.size())) {
    return ctx.Error(absl::StrCat("input 1 (shape) must be 1-D of length ", declared.size(),
                                  ", the rank of the declared output ", DimsString(declared)));
  }
  auto in_elements = NumElements(in->shape);
  if (!in_elements.ok() || *in_elements < 0) {
    return ctx.Error("reshape to a declared shape needs the input's shape static");
  }
  int64_t out_elements = 1;
  for (int64_t d : declared) out_elements *= d;
  if (*in_elements != out_elements) {
    return ctx.Error(absl::StrCat("the output is declared ", DimsString(declared), " (",
                                  out_elements, " elements) but the input ", ShapeToString(in->shape),
                                  " has ", *in_elements));
  }
  KILN_ASSIGN_OR_RETURN(int64_t allowzero, ctx.IntAttr("allowzero", 0));
  OperandRule rule;
  rule.at_most_once = {-1};
  for (size_t i = 0; i < declared.size(); ++i) {
    std::vector<int64_t> allowed;
    if (declared[i] != 0 || allowzero != 0) allowed.push_back(declared[i]);
    if (allowzero == 0 && i < in->shape.size() && in->shape[i].value == declared[i] &&
        declared[i] != 0) {
      allowed.push_back(0);
    }
    int64_t others = 1;
    for (size_t j = 0; j < declared.size(); ++j) others *= j == i ? 1 : declared[j];
    if (others != 0) allowed.push_back(-1);
    if (allowed.empty()) return ctx.Error("no shape input gives the declared output shape");
    rule.allowed.push_back(std::move(allowed));
  }
  KILN_ASSIGN_OR_RETURN(Expr out,
                        ctx.Call("reshape", {x}, MakeAttrs({{"newshape", IntArray(declared)}})));
  KILN_ASSIGN_OR_RETURN(out, GuardOperand(ctx, out, 1, rule,
                                          absl::StrCat("give the shape ", DimsString(declared))));
  return Outputs(out);
}

absl::StatusOr<std::vector<Expr>> ConvertReshape(ConvertContext& ctx) {
  KILN_ASSIGN_OR_RETURN(Expr x, ctx.Input(0));
  KILN_ASSIGN_OR_RETURN(const TensorTypeNode* type, ctx.InputTensorType(0));
  std::vector<ShapeElement> target;
  if (ctx.HasInput(1)) {
    auto value = EvaluateShapeInput(ctx, 1);
    if (!value.ok()) return ctx.Error(value.status().message());
    if (!*value) return ReshapeToDeclaredShape(ctx, x, type);
    if ((*value)->shape.size() != 1) {
      return ctx.Error(
          "input 1 (shape) must be a 1-D constant or computable from tensor shapes at import");
    }
    target = (*value)->elements;
  } else {
    KILN_ASSIGN_OR_RETURN(std::vector<int64_t> shape, ctx.IntsAttr("shape", std::nullopt));
    for (int64_t v : shape) target.push_back(ShapeElement{true, v, ""});
  }
  KILN_ASSIGN_OR_RETURN(int64_t allowzero, ctx.IntAttr("allowzero", 0));
  KILN_ASSIGN_OR_RETURN(std::vector<int64_t> newshape,
                        ResolveReshapeTarget(ctx, type, target, allowzero != 0));
  KILN_ASSIGN_OR_RETURN(Expr out,
                        ctx.Call("reshape", {x}, MakeAttrs({{"newshape", IntArray(newshape)}})));
  KILN_ASSIGN_OR_RETURN(out, FoldShapeArithmetic(ctx, out));
  return Outputs(out);
}

// Flatten(axis) = reshape to (prod(dims[:axis]), prod(dims[axis:])); a side
// with a symbolic dim becomes the -1.
absl::StatusOr<std::vector<Expr>> ConvertFlatten(ConvertContext& ctx) {
  KILN_ASSIGN_OR_RETURN(Expr x, ctx.Input(0));
  KILN_ASSIGN_OR_RETURN(const TensorTypeNode* type, ctx.InputTensorType(0));
  int64_t rank = static_cast<int64_t>(type->shape.size());
  KILN_ASSIGN_OR_RETURN(int64_t axis, ctx.IntAttr("axis", 1));
  if (axis < -rank || axis > rank) {
    return ctx.Error(absl::StrCat("axis ", axis, " is out of range for rank ", rank, " (expected ",
                                  -rank, " to ", rank, ")"));
  }
  if (axis < 0) axis += rank;
  auto outer = NumElements({type->shape.begin(), type->shape.begin() + axis});
  auto inner = NumElements({type->shape.begin() + axis, type->shape.end()});
  if (!outer.ok()) return ctx.Error(outer.status().message());
  if (!inner.ok()) return ctx.Error(inner.status().message());
  if (*outer < 0 && *inner < 0) {
    return ctx.Error(absl::StrCat("cannot flatten ", ShapeToString(type->shape), " at axis ", axis,
                                  ": both sides have symbolic dims (give the model static input "
                                  "shapes, e.g. with an input shape override)"));
  }
  KILN_ASSIGN_OR_RETURN(
      Expr out, ctx.Call("reshape", {x}, MakeAttrs({{"newshape", IntArray({*outer, *inner})}})));
  KILN_ASSIGN_OR_RETURN(out, FoldShapeArithmetic(ctx, out));
  return Outputs(out);
}

absl::StatusOr<std::vector<Expr>> ConvertTranspose(ConvertContext& ctx) {
  KILN_ASSIGN_OR_RETURN(Expr x, ctx.Input(0));
  KILN_ASSIGN_OR_RETURN(std::vector<int64_t> perm, ctx.IntsAttr("perm", std::vector<int64_t>{}));
  KILN_ASSIGN_OR_RETURN(Expr out,
                        ctx.Call("transpose", {x}, MakeAttrs({{"axes", IntArray(perm)}})));
  return Outputs(out);
}

absl::StatusOr<std::vector<Expr>> ConvertConcat(ConvertContext& ctx) {
  // Opset 1 defaulted the axis to 1; from opset 4 it is required.
  KILN_ASSIGN_OR_RETURN(
      int64_t axis,
      ctx.IntAttr("axis", ctx.opset() < 4 ? std::optional<int64_t>(1) : std::nullopt));
  std::vector<Expr> parts;
  for (size_t i = 0; i < ctx.num_inputs(); ++i) {
    if (ctx.HasInput(i)) parts.push_back(*ctx.Input(i));
  }
  if (parts.empty()) return ctx.Error("needs at least one input");
  KILN_ASSIGN_OR_RETURN(Expr out,
                        ctx.Call("concatenate", std::move(parts), MakeAttrs({{"axis", axis}})));
  KILN_ASSIGN_OR_RETURN(out, FoldShapeArithmetic(ctx, out));
  return Outputs(out);
}

// Split sizes (attribute before opset 13, input after) become split indices;
// without sizes the axis splits into one equal part per output.
absl::StatusOr<std::vector<Expr>> ConvertSplit(ConvertContext& ctx) {
  KILN_ASSIGN_OR_RETURN(Expr x, ctx.Input(0));
  KILN_ASSIGN_OR_RETURN(const TensorTypeNode* type, ctx.InputTensorType(0));
  KILN_ASSIGN_OR_RETURN(int64_t axis, ctx.IntAttr("axis", 0));
  int64_t num_outputs = ctx.node().output_size();
  // Split sizes known only at run time: the extents the outputs are declared with, checked.
  std::optional<OperandRule> runtime_sizes;
  std::optional<std::vector<int64_t>> sizes;
  if (KnownOnlyAtRunTime(ctx, 1)) {
    int64_t rank = static_cast<int64_t>(type->shape.size());
    int64_t normalized = axis < 0 ? axis + rank : axis;
    if (normalized < 0 || normalized >= rank) {
      return ctx.Error(absl::StrCat("axis ", axis, " is out of range for rank ", rank));
    }
    runtime_sizes.emplace();
    sizes.emplace();
    for (int64_t k = 0; k < num_outputs; ++k) {
      KILN_ASSIGN_OR_RETURN(std::vector<int64_t> declared,
                            DeclaredShapeOrError(ctx, static_cast<size_t>(k), 1, "split"));
      if (static_cast<int64_t>(declared.size()) != rank) {
        return ctx.Error(absl::StrCat("output ", k, " is declared ", DimsString(declared),
                                      ", not of the input's rank ", rank));
      }
      sizes->push_back(declared[normalized]);
      runtime_sizes->allowed.push_back({declared[normalized]});
    }
  } else {
    KILN_ASSIGN_OR_RETURN(sizes, IntsFromInputOrAttr(ctx, 1, "split", "split"));
  }
  AttrValue split = num_outputs;
  if (sizes) {
    if (static_cast<int64_t>(sizes->size()) != num_outputs) {
      return ctx.Error(
          absl::StrCat("split lists ", sizes->size(), " sizes for ", num_outputs, " outputs"));
    }
    std::vector<int64_t> indices;
    int64_t sum = 0;
    for (size_t i = 0; i < sizes->size(); ++i) {
      if ((*sizes)[i] < 0) {
        return ctx.Error(absl::StrCat("split size ", (*sizes)[i], " is negative"));
      }
      sum += (*sizes)[i];
      if (i + 1 < sizes->size()) indices.push_back(sum);
    }
    int64_t rank = static_cast<int64_t>(type->shape.size());
    if (axis >= -rank && axis < rank) {
      const Dim& dim = type->shape[axis < 0 ? axis + rank : axis];
      if (dim.is_static() && dim.value != sum) {
        return ctx.Error(absl::StrCat("split sizes add up to ", sum, ", but axis ", axis,
                                      " has extent ", dim.value));
      }
    }
    split = IntArray(indices);
  }
  KILN_ASSIGN_OR_RETURN(
      Expr tuple,
      ctx.Call("split", {x}, MakeAttrs({{"indices_or_sections", split}, {"axis", axis}})));
  std::vector<Expr> outputs;
  for (int64_t k = 0; k < num_outputs; ++k) {
    KILN_ASSIGN_OR_RETURN(Expr item, ctx.TupleGetItem(tuple, static_cast<int>(k)));
    if (runtime_sizes) {
      KILN_ASSIGN_OR_RETURN(item, GuardOperand(ctx, item, 1, *runtime_sizes,
                                               absl::StrCat("hold the split sizes ",
                                                            DimsString(*sizes))));
    }
    outputs.push_back(item);
  }
  return outputs;
}

// Slice: bounds are attributes before opset 10 and inputs from then on.
absl::StatusOr<std::vector<Expr>> ConvertSlice(ConvertContext& ctx) {
  KILN_ASSIGN_OR_RETURN(Expr x, ctx.Input(0));
  std::vector<int64_t> starts, ends, axes, steps;
  if (ctx.opset() < 10) {
    KILN_ASSIGN_OR_RETURN(starts, ctx.IntsAttr("starts", std::nullopt));
    KILN_ASSIGN_OR_RETURN(ends, ctx.IntsAttr("ends", std::nullopt));
    KILN_ASSIGN_OR_RETURN(axes, ctx.IntsAttr("axes", std::vector<int64_t>{}));
  } else {
    for (size_t i = 1; i <= 4; ++i) {
      if (ctx.HasInput(i) && !ctx.ConstantInput(i)) return ConvertRunTimeStartSlice(ctx);
    }
    KILN_ASSIGN_OR_RETURN(starts, ctx.ConstantInts(1, "starts"));
    KILN_ASSIGN_OR_RETURN(ends, ctx.ConstantInts(2, "ends"));
    if (ctx.HasInput(3)) {
      KILN_ASSIGN_OR_RETURN(axes, ctx.ConstantInts(3, "axes"));
    }
    if (ctx.HasInput(4)) {
      KILN_ASSIGN_OR_RETURN(steps, ctx.ConstantInts(4, "steps"));
    }
  }
  KILN_ASSIGN_OR_RETURN(Expr out, ctx.Call("strided_slice", {x},
                                           MakeAttrs({{"begin", IntArray(starts)},
                                                      {"end", IntArray(ends)},
                                                      {"strides", IntArray(steps)},
                                                      {"axes", IntArray(axes)}})));
  KILN_ASSIGN_OR_RETURN(out, FoldShapeArithmetic(ctx, out));
  return Outputs(out);
}

// The length of 1-D input `i` (axes, repeats, split sizes), or an error.
absl::StatusOr<int64_t> VectorInputLength(const ConvertContext& ctx, size_t i, const char* what) {
  KILN_ASSIGN_OR_RETURN(const TensorTypeNode* type, ctx.InputTensorType(i));
  if (type->shape.size() != 1 || !type->shape[0].is_static()) {
    return ctx.Error(absl::StrCat("input ", i, " (", what, ") must be 1-D of static length"));
  }
  return type->shape[0].value;
}

// Squeeze or Unsqueeze whose axes input is known only at run time: a reshape to the shape the
// model declares, with a run-time check that the axes give it.
absl::StatusOr<std::vector<Expr>> AxesToDeclaredShape(ConvertContext& ctx, const Expr& x,
                                                      bool squeeze) {
  KILN_ASSIGN_OR_RETURN(std::vector<int64_t> declared, DeclaredShapeOrError(ctx, 0, 1, "axes"));
  KILN_ASSIGN_OR_RETURN(std::vector<int64_t> in, StaticInputShape(ctx, 0));
  KILN_ASSIGN_OR_RETURN(int64_t count, VectorInputLength(ctx, 1, "axes"));
  const std::vector<int64_t>& longer = squeeze ? in : declared;
  const std::vector<int64_t>& shorter = squeeze ? declared : in;
  if (static_cast<int64_t>(longer.size()) != static_cast<int64_t>(shorter.size()) + count) {
    return ctx.Error(absl::StrCat("input 1 (axes) has ", count, " entries, but the input ",
                                  DimsString(in), " and the declared output ", DimsString(declared),
                                  " differ in rank by ", longer.size() - shorter.size()));
  }
  // A set of axes of the longer shape gives the shorter one when they are all 1s and the rest
  // matches in order.
  auto gives = [&](const std::vector<int64_t>& axes) {
    std::vector<int64_t> rest;
    size_t next = 0;
    for (size_t d = 0; d < longer.size(); ++d) {
      if (next < axes.size() && axes[next] == static_cast<int64_t>(d)) {
        ++next;
        if (longer[d] != 1) return false;
      } else {
        rest.push_back(longer[d]);
      }
    }
    return rest == shorter;
  };
  KILN_ASSIGN_OR_RETURN(OperandRule rule,
                        AxesRule(ctx, count, static_cast<int64_t>(longer.size()), gives));
  KILN_ASSIGN_OR_RETURN(Expr out,
                        ctx.Call("reshape", {x}, MakeAttrs({{"newshape", IntArray(declared)}})));
  KILN_ASSIGN_OR_RETURN(out, GuardOperand(ctx, out, 1, rule,
                                          absl::StrCat("list axes that give the shape ",
                                                       DimsString(declared))));
  return Outputs(out);
}

absl::StatusOr<std::vector<Expr>> ConvertSqueeze(ConvertContext& ctx) {
  KILN_ASSIGN_OR_RETURN(Expr x, ctx.Input(0));
  if (KnownOnlyAtRunTime(ctx, 1)) return AxesToDeclaredShape(ctx, x, true);
  KILN_ASSIGN_OR_RETURN(std::optional<std::vector<int64_t>> axes,
                        IntsFromInputOrAttr(ctx, 1, "axes", "axes"));
  KILN_ASSIGN_OR_RETURN(
      Expr out, ctx.Call("squeeze", {x},
                         MakeAttrs({{"axis", IntArray(axes.value_or(std::vector<int64_t>{}))}})));
  KILN_ASSIGN_OR_RETURN(out, FoldShapeArithmetic(ctx, out));
  return Outputs(out);
}

// Unsqueeze's axes are positions in the output. Inserting them in ascending
// order, one expand_dims per run of consecutive positions, puts each where
// it belongs.
absl::StatusOr<std::vector<Expr>> ConvertUnsqueeze(ConvertContext& ctx) {
  KILN_ASSIGN_OR_RETURN(Expr x, ctx.Input(0));
  if (KnownOnlyAtRunTime(ctx, 1)) return AxesToDeclaredShape(ctx, x, false);
  KILN_ASSIGN_OR_RETURN(const TensorTypeNode* type, ctx.InputTensorType(0));
  KILN_ASSIGN_OR_RETURN(std::optional<std::vector<int64_t>> given,
                        IntsFromInputOrAttr(ctx, 1, "axes", "axes"));
  if (!given || given->empty()) return ctx.Error("axes must list at least one axis");
  int64_t out_rank = static_cast<int64_t>(type->shape.size() + given->size());
  std::vector<int64_t> axes;
  for (int64_t a : *given) {
    auto axis = NormalizeAxis(a, out_rank);
    if (!axis.ok()) return ctx.Error(axis.status().message());
    axes.push_back(*axis);
  }
  std::sort(axes.begin(), axes.end());
  if (std::adjacent_find(axes.begin(), axes.end()) != axes.end()) {
    return ctx.Error("axes lists an axis twice");
  }
  Expr out = x;
  for (size_t i = 0; i < axes.size();) {
    size_t run = 1;
    while (i + run < axes.size() && axes[i + run] == axes[i] + static_cast<int64_t>(run)) ++run;
    KILN_ASSIGN_OR_RETURN(
        out, ctx.Call("expand_dims", {out},
                      MakeAttrs({{"axis", axes[i]}, {"num_newaxis", static_cast<int64_t>(run)}})));
    i += run;
  }
  KILN_ASSIGN_OR_RETURN(out, FoldShapeArithmetic(ctx, out));
  return Outputs(out);
}

// Expand broadcasts both ways (a 1 in the shape keeps the input's extent), so
// the result shape is the broadcast of both. A shape entry known only as a
// named symbolic dim stays that symbol.
// Expand whose shape input is known only at run time: a broadcast to the shape the model
// declares, with a run-time check that the shape gives it (each entry that extent, or 1 where the
// input already has it).
absl::StatusOr<std::vector<Expr>> ExpandToDeclaredShape(ConvertContext& ctx, const Expr& x) {
  KILN_ASSIGN_OR_RETURN(std::vector<int64_t> declared, DeclaredShapeOrError(ctx, 0, 1, "shape"));
  KILN_ASSIGN_OR_RETURN(std::vector<int64_t> in, StaticInputShape(ctx, 0));
  KILN_ASSIGN_OR_RETURN(int64_t count, VectorInputLength(ctx, 1, "shape"));
  const size_t rank = declared.size();
  if (rank != std::max(in.size(), static_cast<size_t>(count))) {
    return ctx.Error(absl::StrCat("the declared output ", DimsString(declared), " is not of rank max(",
                                  in.size(), ", ", count, ")"));
  }
  // Position d of the output, counted from the right, is the input's extent (1 where the input
  // is shorter) broadcast with the shape's entry (1 where the shape is shorter).
  OperandRule rule;
  for (size_t d = 0; d < rank; ++d) {
    size_t from_right = rank - 1 - d;
    int64_t in_extent = from_right < in.size() ? in[in.size() - 1 - from_right] : 1;
    if (in_extent != declared[d] && in_extent != 1) {
      return ctx.Error(absl::StrCat("the input ", DimsString(in),
                                    " does not broadcast to the declared output ",
                                    DimsString(declared)));
    }
    if (from_right >= static_cast<size_t>(count)) {
      if (in_extent != declared[d]) {
        return ctx.Error(absl::StrCat("the declared output ", DimsString(declared),
                                      " has extent ", declared[d], " where only the input ",
                                      DimsString(in), " decides it"));
      }
      continue;
    }
    std::vector<int64_t> allowed{declared[d]};
    if (in_extent == declared[d] && declared[d] != 1) allowed.push_back(1);
    rule.allowed.push_back(std::move(allowed));
  }
  std::vector<Dim> dims;
  for (int64_t d : declared) dims.push_back(Dim::Static(d));
  KILN_ASSIGN_OR_RETURN(Expr out,
                        ctx.Call("broadcast_to", {x}, MakeAttrs({{"shape", ShapeValue{dims}}})));
  KILN_ASSIGN_OR_RETURN(out, GuardOperand(ctx, out, 1, rule,
                                          absl::StrCat("broadcast the input to ", DimsString(declared))));
  return Outputs(out);
}

absl::StatusOr<std::vector<Expr>> ConvertExpand(ConvertContext& ctx) {
  KILN_ASSIGN_OR_RETURN(Expr x, ctx.Input(0));
  KILN_ASSIGN_OR_RETURN(const TensorTypeNode* type, ctx.InputTensorType(0));
  auto value = EvaluateShapeInput(ctx, 1);
  if (!value.ok()) return ctx.Error(value.status().message());
  if (!*value) return ExpandToDeclaredShape(ctx, x);
  if ((*value)->shape.size() != 1) {
    return ctx.Error(
        "input 1 (shape) must be a 1-D constant or computable from tensor shapes at import");
  }
  std::vector<Dim> target;
  for (const ShapeElement& e : (*value)->elements) {
    if (!e.known && e.symbol.empty()) {
      return ctx.Error("input 1 (shape) has an entry known only at run time");
    }
    if (e.known && e.value < 0) {
      return ctx.Error(absl::StrCat("input 1 (shape) has negative extent ", e.value));
    }
    target.push_back(e.known ? Dim::Static(e.value) : Dim::Symbolic(e.symbol));
  }
  auto result = BroadcastShapes(type->shape, target);
  if (!result.ok()) return ctx.Error(result.status().message());
  KILN_ASSIGN_OR_RETURN(Expr out,
                        ctx.Call("broadcast_to", {x}, MakeAttrs({{"shape", ShapeValue{*result}}})));
  KILN_ASSIGN_OR_RETURN(out, FoldShapeArithmetic(ctx, out));
  return Outputs(out);
}

// Tile whose repeats are known only at run time: the repeats the declared shape implies
// (declared extent / input extent), checked at run time.
absl::StatusOr<std::vector<Expr>> TileToDeclaredShape(ConvertContext& ctx, const Expr& x) {
  KILN_ASSIGN_OR_RETURN(std::vector<int64_t> declared, DeclaredShapeOrError(ctx, 0, 1, "repeats"));
  KILN_ASSIGN_OR_RETURN(std::vector<int64_t> in, StaticInputShape(ctx, 0));
  KILN_ASSIGN_OR_RETURN(int64_t count, VectorInputLength(ctx, 1, "repeats"));
  if (declared.size() != in.size() || count != static_cast<int64_t>(in.size())) {
    return ctx.Error(absl::StrCat("input 1 (repeats) has ", count, " entries and the output is "
                                  "declared ", DimsString(declared), " for an input ",
                                  DimsString(in), " (all three must have one rank)"));
  }
  std::vector<int64_t> repeats;
  OperandRule rule;
  for (size_t d = 0; d < in.size(); ++d) {
    if (in[d] == 0 || declared[d] % in[d] != 0) {
      return ctx.Error(absl::StrCat("the declared output ", DimsString(declared),
                                    " is not a tiling of the input ", DimsString(in)));
    }
    repeats.push_back(declared[d] / in[d]);
    rule.allowed.push_back({repeats.back()});
  }
  KILN_ASSIGN_OR_RETURN(Expr out, ctx.Call("tile", {x}, MakeAttrs({{"reps", IntArray(repeats)}})));
  KILN_ASSIGN_OR_RETURN(out, GuardOperand(ctx, out, 1, rule,
                                          absl::StrCat("hold the repeats ", DimsString(repeats))));
  return Outputs(out);
}

absl::StatusOr<std::vector<Expr>> ConvertTile(ConvertContext& ctx) {
  KILN_ASSIGN_OR_RETURN(Expr x, ctx.Input(0));
  KILN_ASSIGN_OR_RETURN(const TensorTypeNode* type, ctx.InputTensorType(0));
  if (KnownOnlyAtRunTime(ctx, 1)) return TileToDeclaredShape(ctx, x);
  KILN_ASSIGN_OR_RETURN(std::vector<int64_t> repeats, ctx.ConstantInts(1, "repeats"));
  if (repeats.size() != type->shape.size()) {
    return ctx.Error(absl::StrCat("repeats has ", repeats.size(), " entries for an input of rank ",
                                  type->shape.size()));
  }
  KILN_ASSIGN_OR_RETURN(Expr out, ctx.Call("tile", {x}, MakeAttrs({{"reps", IntArray(repeats)}})));
  return Outputs(out);
}

}  // namespace

void RegisterTransformConverters(ConverterTable& table) {
  table.Add("Reshape", ConvertReshape);
  table.Add("Flatten", ConvertFlatten);
  table.Add("Transpose", ConvertTranspose);
  table.Add("Concat", ConvertConcat);
  table.Add("Split", ConvertSplit);
  table.Add("Slice", ConvertSlice);
  table.Add("Squeeze", ConvertSqueeze);
  table.Add("Unsqueeze", ConvertUnsqueeze);
  table.Add("Expand", ConvertExpand);
  table.Add("Tile", ConvertTile);
  RegisterIndexConverters(table);
  RegisterConstantConverters(table);
}

}  // namespace kiln::onnx_frontend
