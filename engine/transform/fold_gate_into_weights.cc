// FoldGateIntoWeights: rewrites the blocked convolutions whose data is a gated
// activation (see the header for the pattern and why it is correct).
#include "engine/transform/fold_gate_into_weights.h"

#include <vector>

#include "engine/ir/expr_mutator.h"
#include "engine/op/op_registry.h"
#include "engine/op/type_relations.h"
#include "engine/pass/rewriter_pass.h"
#include "engine/support/status_macros.h"
#include "engine/transform/expr_builder.h"
#include "engine/transform/graph_rewriter.h"
#include "engine/transform/si_builder.h"

namespace kiln::transform {
namespace {

// The static shape of a float32 tensor-typed expression, or empty.
std::vector<int64_t> StaticFloatShape(const Expr& expr) {
  const auto* type = expr->checked_type.as<TensorTypeNode>();
  if (type == nullptr || type->dtype != DataType::kFloat32) return {};
  std::vector<int64_t> shape;
  for (const Dim& d : type->shape) {
    if (!d.is_static()) return {};
    shape.push_back(d.value);
  }
  return shape;
}

int64_t Elements(const std::vector<int64_t>& shape) {
  int64_t count = 1;
  for (int64_t extent : shape) count *= extent;
  return count;
}

// How many activation values each weight must stand for before a gate is moved onto the weights.
constexpr int64_t kMinActivationsPerWeight = 8;

Span MergedSpan(const std::vector<Span>& origins) {
  return SIBuilder(MakeSequentialSpan(origins)).CreateSpan();
}

class GateFolder : public GraphRewriter {
 public:
  explicit GateFolder(const Function& func) : GraphRewriter(func) {}

 protected:
  Result Rewrite_(const CallNode* pre, const Expr& post) override {
    static const OpEntry& conv = OpRegistry::Global().Get("nn.conv2d_nchwc");
    static const OpEntry& multiply = OpRegistry::Global().Get("multiply");
    const auto* call = AsCallOf(post, conv);
    if (call == nullptr || call->args.size() != 2 || !post->checked_type) return post;
    const auto* gated = AsCallOf(call->args[0], multiply);
    const auto* weight = call->args[1].as<ConstantNode>();
    if (gated == nullptr || gated->args.size() != 2 || weight == nullptr) return post;
    if (Uses(pre->args[0].get()) != 1) return post;
    // Normalized attributes (the call is typed) always hold groups.
    if (IntAttr(*call->attrs, "groups") != 1) return post;

    const std::vector<int64_t> data_shape = StaticFloatShape(call->args[0]);
    const std::vector<int64_t> weight_shape = StaticFloatShape(call->args[1]);
    if (data_shape.size() != 5 || data_shape[0] != 1 || weight_shape.size() != 6 ||
        weight_shape[1] != data_shape[1] || weight_shape[4] != data_shape[4]) {
      return post;
    }
    // Which operand is the activation and which the gate (1, C/ib, 1, 1, ib).
    const std::vector<int64_t> gate_shape = {1, data_shape[1], 1, 1, data_shape[4]};
    int activation = -1;
    for (int i : {0, 1}) {
      if (StaticFloatShape(gated->args[i]) == data_shape &&
          StaticFloatShape(gated->args[1 - i]) == gate_shape) {
        activation = i;
      }
    }
    if (activation < 0 || data_shape == gate_shape) return post;
    // Scale the weights only when they are far fewer than the values the multiply scales: the
    // weight product is a kernel of its own (a parallel loop, a broadcast per vector), measured
    // no faster per element than the activation multiply it replaces.
    if (Elements(weight_shape) * kMinActivationsPerWeight > Elements(data_shape)) return post;

    const Expr& x = gated->args[activation];
    const Expr& gate = gated->args[1 - activation];
    const Span weight_span = MergedSpan({call->args[0]->span, post->span});
    KILN_ASSIGN_OR_RETURN(
        Expr aligned,
        MakeTypedCall("reshape", {gate},
                      MakeAttrs({{"newshape", IntArray({1, data_shape[1], 1, 1, data_shape[4], 1})}}),
                      weight_span));
    KILN_ASSIGN_OR_RETURN(Expr scaled,
                          MakeTypedCall("multiply", {call->args[1], aligned}, nullptr, weight_span));
    KILN_ASSIGN_OR_RETURN(Expr result,
                          MakeTypedCall(conv.name, {x, scaled}, call->attrs,
                                        MergedSpan({post->span, call->args[0]->span})));
    return WithFields(result, ExprFields{result->span, result->checked_type, post->virtual_device});
  }
};

}  // namespace

Pass FoldGateIntoWeights() {
  return CreateRewriterPass(
      [](const Function& func, const IRModule&, PassContext&) { return GateFolder(func); },
      PassInfo{"FoldGateIntoWeights", 3, {"InferType"}, PassStage::kGraph});
}

}  // namespace kiln::transform
