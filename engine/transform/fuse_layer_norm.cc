// FuseLayerNorm: the op-by-op layer normalization matched and replaced (see the header).
#include "engine/transform/fuse_layer_norm.h"

#include <functional>
#include <optional>
#include <vector>

#include "engine/ir/expr_mutator.h"
#include "engine/ir/structural_equal.h"
#include "engine/op/op_registry.h"
#include "engine/op/type_inference.h"
#include "engine/op/type_relations.h"
#include "engine/pass/rewriter_pass.h"
#include "engine/support/status_macros.h"
#include "engine/transform/expr_builder.h"
#include "engine/transform/graph_rewriter.h"
#include "engine/transform/si_builder.h"

namespace kiln::transform {
namespace {

const OpEntry& Op(const char* name) { return OpRegistry::Global().Get(name); }

// The static shape of a float32 tensor-typed expression, or nullopt.
std::optional<std::vector<int64_t>> StaticFloatShape(const Expr& expr) {
  const TensorTypeNode* type = TensorTypeOf(expr);
  if (type == nullptr || type->dtype != DataType::kFloat32) return std::nullopt;
  std::vector<int64_t> shape;
  for (const Dim& d : type->shape) {
    if (!d.is_static()) return std::nullopt;
    shape.push_back(d.value);
  }
  return shape;
}

// The value of a one-element float32 constant of rank 0 or 1, which broadcasts onto a tensor of
// rank 1 or more without adding a dim.
std::optional<double> ScalarConstant(const Expr& expr) {
  const auto* constant = expr.as<ConstantNode>();
  std::optional<std::vector<int64_t>> shape = StaticFloatShape(expr);
  if (constant == nullptr || !shape || shape->size() > 1 || constant->data->NumElements() != 1) {
    return std::nullopt;
  }
  return ConstantElement(*constant->data, 0);
}

// Whether `expr` is a float32 constant whose shape is the last dims of `shape`, all within the
// normalized axes [axis, rank): it then scales or shifts each row the same way.
bool IsRowAffine(const Expr& expr, const std::vector<int64_t>& shape, int64_t axis) {
  if (expr.as<ConstantNode>() == nullptr) return false;
  std::optional<std::vector<int64_t>> own = StaticFloatShape(expr);
  if (!own || own->empty() || own->size() > shape.size() - axis) return false;
  return std::equal(own->begin(), own->end(), shape.end() - own->size());
}

// The first normalized axis when `call` is a keepdims mean over trailing axes [axis, rank) of
// its operand (of static shape `shape`).
std::optional<int64_t> TrailingMeanAxis(const CallNode& call, const std::vector<int64_t>& shape) {
  if (!call.attrs || !BoolAttr(*call.attrs, "keepdims") ||
      BoolAttr(*call.attrs, "exclude")) {
    return std::nullopt;
  }
  const int64_t rank = static_cast<int64_t>(shape.size());
  std::vector<bool> reduced(rank, false);
  for (int64_t a : IntArrayAttr(*call.attrs, "axis")) {
    absl::StatusOr<int64_t> normalized = NormalizeAxis(a, rank);
    if (!normalized.ok() || reduced[*normalized]) return std::nullopt;
    reduced[*normalized] = true;
  }
  int64_t axis = rank;
  while (axis > 0 && reduced[axis - 1]) --axis;
  for (int64_t d = 0; d < axis; ++d) {
    if (reduced[d]) return std::nullopt;  // not one trailing run
  }
  if (axis == rank) return std::nullopt;
  return axis;
}

// The operand of the binary call `call` that is not `other`'s kind: for a commutative call of
// (pattern operand, constant), the index of the pattern operand given a predicate on the other.
template <typename Predicate>
int OperandBeside(const CallNode& call, Predicate is_other) {
  if (call.args.size() != 2) return -1;
  for (int i : {0, 1}) {
    if (is_other(call.args[1 - i])) return i;
  }
  return -1;
}

struct LayerNorm {
  Expr x;
  int64_t axis = 0;
  double epsilon = 0;
};

// How many nodes of the function use a node.
using UseCount = std::function<int64_t(const Expr&)>;

// The layer norm `normalized` computes: divide(d, sqrt(add(v, eps))) or
// multiply(d, rsqrt(add(v, eps))), d and v as in the header, every node between `normalized`
// and x used only inside the pattern (else the rewrite would add a kernel, not replace five).
std::optional<LayerNorm> MatchNormalized(const Expr& normalized, const UseCount& uses) {
  static const OpEntry& divide = Op("divide");
  static const OpEntry& multiply = Op("multiply");
  static const OpEntry& subtract = Op("subtract");
  static const OpEntry& add = Op("add");
  static const OpEntry& sqrt = Op("sqrt");
  static const OpEntry& rsqrt = Op("rsqrt");
  static const OpEntry& mean = Op("mean");
  static const OpEntry& power = Op("power");

  Expr d, root, inverse;
  if (const CallNode* div = AsCallOf(normalized, divide); div != nullptr && div->args.size() == 2) {
    const CallNode* s = AsCallOf(div->args[1], sqrt);
    if (s == nullptr) return std::nullopt;
    d = div->args[0];
    inverse = div->args[1];
    root = s->args[0];
  } else if (const CallNode* mul = AsCallOf(normalized, multiply)) {
    int i = OperandBeside(*mul, [](const Expr& e) { return AsCallOf(e, Op("rsqrt")) != nullptr; });
    if (i < 0) return std::nullopt;
    d = mul->args[i];
    inverse = mul->args[1 - i];
    root = AsCallOf(inverse, rsqrt)->args[0];
  } else {
    return std::nullopt;
  }
  if (uses(inverse) != 1 || uses(root) != 1) return std::nullopt;
  // root = add(v, eps)
  const CallNode* shifted = AsCallOf(root, add);
  if (shifted == nullptr) return std::nullopt;
  int v_index = OperandBeside(*shifted, [](const Expr& e) { return ScalarConstant(e).has_value(); });
  if (v_index < 0) return std::nullopt;
  const double epsilon = *ScalarConstant(shifted->args[1 - v_index]);
  // d = subtract(x, mean(x, A))
  const CallNode* centered = AsCallOf(d, subtract);
  if (centered == nullptr || centered->args.size() != 2) return std::nullopt;
  const Expr& x = centered->args[0];
  const CallNode* mu = AsCallOf(centered->args[1], mean);
  std::optional<std::vector<int64_t>> shape = StaticFloatShape(x);
  if (mu == nullptr || !shape || shape->empty() || !mu->args[0].same_as(x)) return std::nullopt;
  std::optional<int64_t> axis = TrailingMeanAxis(*mu, *shape);
  // v = mean(power(d, 2) or multiply(d, d), A)
  const CallNode* variance = AsCallOf(shifted->args[v_index], mean);
  if (!axis || variance == nullptr || TrailingMeanAxis(*variance, *shape) != axis) {
    return std::nullopt;
  }
  const Expr& square = variance->args[0];
  const CallNode* pow = AsCallOf(square, power);
  const CallNode* product = AsCallOf(square, multiply);
  bool squares_d = (pow != nullptr && pow->args[0].same_as(d) && ScalarConstant(pow->args[1]) == 2.0) ||
                   (product != nullptr && product->args.size() == 2 && product->args[0].same_as(d) &&
                    product->args[1].same_as(d));
  if (!squares_d) return std::nullopt;
  // d feeds the square (once as power's base, twice as the product's operands) and `normalized`.
  if (uses(centered->args[1]) != 1 || uses(shifted->args[v_index]) != 1 || uses(square) != 1 ||
      uses(d) != (pow != nullptr ? 2 : 3)) {
    return std::nullopt;
  }
  return LayerNorm{x, *axis, epsilon};
}

class LayerNormFuser : public GraphRewriter {
 public:
  explicit LayerNormFuser(const Function& func) : GraphRewriter(func) {}

 protected:
  Result Rewrite_(const CallNode* pre, const Expr& post) override {
    static const OpEntry& multiply = Op("multiply");
    static const OpEntry& add = Op("add");
    static const OpEntry& layer_norm = Op("nn.layer_norm");
    if (const CallNode* scale = AsCallOf(post, multiply)) {
      // multiply(n, gamma)
      for (int i : {0, 1}) {
        if (scale->args.size() != 2) break;
        if (Uses(scale->args[i].get()) != 1) continue;
        std::optional<LayerNorm> norm =
            MatchNormalized(scale->args[i], [this](const Expr& e) { return Uses(e.get()); });
        if (!norm) continue;
        std::optional<std::vector<int64_t>> shape = StaticFloatShape(norm->x);
        const Expr& gamma = scale->args[1 - i];
        if (!IsRowAffine(gamma, *shape, norm->axis)) continue;
        return Build(post, {norm->x, gamma}, norm->axis, norm->epsilon);
      }
      return post;
    }
    if (const CallNode* shift = AsCallOf(post, add); shift != nullptr && shift->args.size() == 2) {
      // add(nn.layer_norm(x, gamma), beta), the layer norm used only here
      for (int i : {0, 1}) {
        const CallNode* norm = AsCallOf(shift->args[i], layer_norm);
        if (norm == nullptr || norm->args.size() != 2 || !norm->attrs) continue;
        if (Uses(pre->args[i].get()) != 1) continue;
        std::optional<std::vector<int64_t>> shape = StaticFloatShape(norm->args[0]);
        if (!shape) continue;
        absl::StatusOr<int64_t> axis =
            NormalizeAxis(IntAttr(*norm->attrs, "axis"), static_cast<int64_t>(shape->size()));
        const Expr& beta = shift->args[1 - i];
        if (!axis.ok() || !IsRowAffine(beta, *shape, *axis)) continue;
        return Build(post, {norm->args[0], norm->args[1], beta}, *axis,
                     FloatAttr(*norm->attrs, "epsilon"));
      }
    }
    return post;
  }

 private:
  // nn.layer_norm(args) in place of `replaced`, with the spans of every node from `replaced`
  // down to the arguments. The call is typed; if the relation rejects it, nothing is rewritten.
  Expr Build(const Expr& replaced, const std::vector<Expr>& args, int64_t axis, double epsilon) {
    Span span = SIBuilder(replaced, args).CreateSpan();
    absl::StatusOr<Expr> call =
        MakeTypedCall("nn.layer_norm", args,
                      MakeAttrs({{"axis", axis}, {"epsilon", epsilon}}), span);
    // The replaced expression's type, or the match was wrong (a broadcast it did not expect).
    if (!call.ok() || !call.value()->checked_type ||
        !StructuralEqual(call.value()->checked_type, replaced->checked_type)) {
      return replaced;
    }
    const Expr& result = *call;
    return WithFields(result, ExprFields{result->span, result->checked_type, replaced->virtual_device});
  }
};

}  // namespace

Pass FuseLayerNorm() {
  return CreateRewriterPass(
      [](const Function& func, const IRModule&, PassContext&) { return LayerNormFuser(func); },
      PassInfo{"FuseLayerNorm", 3, {"InferType"}, PassStage::kGraph});
}

}  // namespace kiln::transform
