// Guards of shapes compiled in from a model's declarations (see shape_guards.h).
#include "engine/frontend/onnx/shape_guards.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "engine/frontend/onnx/scalar_tensors.h"
#include "engine/support/status_macros.h"

namespace kiln::onnx_frontend {

std::string DimsString(const std::vector<int64_t>& dims) {
  return absl::StrCat("[", absl::StrJoin(dims, ", "), "]");
}

bool KnownOnlyAtRunTime(const ConvertContext& ctx, size_t i) {
  return ctx.HasInput(i) && !ctx.ConstantInput(i);
}

absl::StatusOr<std::vector<int64_t>> StaticInputShape(const ConvertContext& ctx, size_t i) {
  KILN_ASSIGN_OR_RETURN(const TensorTypeNode* type, ctx.InputTensorType(i));
  std::vector<int64_t> dims;
  for (const Dim& dim : type->shape) {
    if (!dim.is_static()) {
      return ctx.Error(absl::StrCat("input ", i, " needs a static shape for a shape the model "
                                    "declares to be compiled in"));
    }
    dims.push_back(dim.value);
  }
  return dims;
}

absl::StatusOr<std::vector<int64_t>> DeclaredShapeOrError(const ConvertContext& ctx, size_t output,
                                                          size_t operand, std::string_view what) {
  if (std::optional<std::vector<int64_t>> shape = ctx.DeclaredOutputShape(output)) return *shape;
  return ctx.Error(absl::StrCat(
      "input ", operand, " (", std::string(what), ") decides the shape of output ", output,
      ", but it is known only at run time and the model does not declare a static shape for that "
      "output (declare one, make the input a constant, or give its value at compile time)"));
}

absl::StatusOr<OperandRule> ExactShapeRule(const ConvertContext& ctx, size_t operand,
                                           std::string_view what,
                                           const std::vector<int64_t>& declared) {
  KILN_ASSIGN_OR_RETURN(const TensorTypeNode* type, ctx.InputTensorType(operand));
  if (type->shape.size() != 1 || type->shape[0] != Dim::Static(static_cast<int64_t>(declared.size()))) {
    return ctx.Error(absl::StrCat("input ", operand, " (", std::string(what),
                                  ") must be 1-D of length ", declared.size(),
                                  ", the rank of the declared output ", DimsString(declared)));
  }
  OperandRule rule;
  for (int64_t extent : declared) rule.allowed.push_back({extent});
  return rule;
}

absl::StatusOr<Expr> GuardCondition(ConvertContext& ctx, const Expr& value, const Expr& condition,
                                    std::string_view expectation) {
  return ctx.Call("assert", {value, condition},
                  MakeAttrs({{"message", AttrValue(absl::StrCat(ctx.Describe(), ": ",
                                                                std::string(expectation)))}}));
}

absl::StatusOr<Expr> GuardOperand(ConvertContext& ctx, const Expr& value, size_t operand,
                                  const OperandRule& rule, std::string_view expectation) {
  KILN_ASSIGN_OR_RETURN(Expr input, ctx.Input(operand));
  KILN_ASSIGN_OR_RETURN(const TensorTypeNode* type, ctx.InputTensorType(operand));
  if (IsFloat(type->dtype)) {
    KILN_ASSIGN_OR_RETURN(input, ctx.Call("cast", {input}, MakeAttrs({{"dtype", DataType::kInt64}})));
  }
  std::vector<int64_t> allowed, counts;
  for (const std::vector<int64_t>& values : rule.allowed) {
    counts.push_back(static_cast<int64_t>(values.size()));
    allowed.insert(allowed.end(), values.begin(), values.end());
  }
  KILN_ASSIGN_OR_RETURN(
      Expr ok, ctx.Call("shape_operand_check", {input},
                        MakeAttrs({{"allowed", IntArray(allowed)},
                                   {"allowed_counts", IntArray(counts)},
                                   {"distinct_modulo", AttrValue(rule.distinct_modulo)},
                                   {"at_most_once", IntArray(rule.at_most_once)}})));
  return GuardCondition(ctx, value, ok,
                        absl::StrCat("input ", operand, " must ", std::string(expectation),
                                     " (the shape the model declares and was compiled for)"));
}

namespace {

// Calls fn on every `count`-subset of [0, n) in lexicographic order; false when there are more than
// `limit` subsets (nothing called then).
bool ForEachSubset(int64_t n, int64_t count, int64_t limit,
                   const std::function<void(const std::vector<int64_t>&)>& fn) {
  if (count < 0 || count > n) return true;
  double subsets = 1;
  for (int64_t i = 0; i < count; ++i) subsets = subsets * static_cast<double>(n - i) / static_cast<double>(i + 1);
  if (subsets > static_cast<double>(limit)) return false;
  std::vector<int64_t> set(count);
  for (int64_t i = 0; i < count; ++i) set[i] = i;
  while (true) {
    fn(set);
    int64_t i = count - 1;
    while (i >= 0 && set[i] == n - count + i) --i;
    if (i < 0) return true;
    ++set[i];
    for (int64_t j = i + 1; j < count; ++j) set[j] = set[j - 1] + 1;
  }
}

}  // namespace

absl::StatusOr<OperandRule> AxesRule(const ConvertContext& ctx, int64_t count, int64_t rank,
                                     const std::function<bool(const std::vector<int64_t>&)>& gives,
                                     std::vector<std::vector<int64_t>>* accepted_sets) {
  constexpr int64_t kMaxSubsets = 4096;
  std::vector<bool> in_union(rank, false);
  int64_t accepted = 0;
  bool enumerable = ForEachSubset(rank, count, kMaxSubsets, [&](const std::vector<int64_t>& set) {
    if (!gives(set)) return;
    ++accepted;
    if (accepted_sets != nullptr) accepted_sets->push_back(set);
    for (int64_t axis : set) in_union[axis] = true;
  });
  if (!enumerable) return ctx.Error("too many axis sets to check against the declared shape");
  std::vector<int64_t> axes;
  for (int64_t axis = 0; axis < rank; ++axis) {
    if (in_union[axis]) axes.push_back(axis);
  }
  int64_t of_union = 0;
  ForEachSubset(static_cast<int64_t>(axes.size()), count, kMaxSubsets,
                [&](const std::vector<int64_t>&) { ++of_union; });
  if (accepted == 0) return ctx.Error("no axes give the declared output shape");
  if (accepted != of_union) {
    return ctx.Error("the declared output shape does not tell which axes the input must hold");
  }
  OperandRule rule;
  rule.distinct_modulo = rank;
  std::vector<int64_t> allowed;
  for (int64_t axis : axes) {
    allowed.push_back(axis);
    allowed.push_back(axis - rank);
  }
  rule.allowed.assign(count, allowed);
  return rule;
}

absl::StatusOr<Expr> NonzeroCount(ConvertContext& ctx, const Expr& x) {
  KILN_ASSIGN_OR_RETURN(Expr flags, ctx.Call("cast", {x}, MakeAttrs({{"dtype", DataType::kBool}})));
  KILN_ASSIGN_OR_RETURN(Expr ones, ctx.Call("cast", {flags}, MakeAttrs({{"dtype", DataType::kInt64}})));
  return ctx.Call("sum", {ones});
}

absl::StatusOr<Expr> NonzeroCountIs(ConvertContext& ctx, const Expr& x, int64_t expected) {
  KILN_ASSIGN_OR_RETURN(Expr count, NonzeroCount(ctx, x));
  return ctx.Call("equal", {count, ctx.Constant(ScalarTensor(DataType::kInt64, static_cast<double>(expected)))});
}

}  // namespace kiln::onnx_frontend
