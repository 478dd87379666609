// CanonicalizeOps: a post-order rewriter over operator calls.
#include "engine/transform/canonicalize_ops.h"

#include "engine/ir/expr_mutator.h"
#include "engine/op/op_registry.h"
#include "engine/pass/rewriter_pass.h"
#include "engine/support/status_macros.h"
#include "engine/transform/expr_builder.h"

namespace kiln::transform {
namespace {

class Canonicalizer : public PostOrderRewriter {
 protected:
  Result Rewrite_(const CallNode* /*pre*/, const Expr& post) override {
    static const OpEntry& bias_add = OpRegistry::Global().Get("nn.bias_add");
    const auto* call = post.as<CallNode>();
    if (!IsOp(call->op, bias_add) || call->args.size() != 2) return post;
    const auto* data_type = call->args[0]->checked_type.as<TensorTypeNode>();
    const AttrValue* axis_value = call->attrs ? call->attrs->Find("axis") : nullptr;
    if (data_type == nullptr || axis_value == nullptr || !axis_value->is<int64_t>()) return post;
    int64_t rank = static_cast<int64_t>(data_type->shape.size());
    int64_t axis = axis_value->get<int64_t>();
    if (axis < 0) axis += rank;
    if (axis < 0 || axis >= rank) return post;
    Expr bias = call->args[1];
    int64_t new_axes = rank - axis - 1;
    if (new_axes > 0) {
      KILN_ASSIGN_OR_RETURN(
          bias, MakeTypedCall("expand_dims", {bias},
                              MakeAttrs({{"axis", AttrValue(int64_t{1})},
                                         {"num_newaxis", AttrValue(new_axes)}}),
                              post->span));
    }
    KILN_ASSIGN_OR_RETURN(Expr sum,
                          MakeTypedCall("add", {call->args[0], bias}, nullptr, post->span));
    return WithFields(sum, ExprFields{post->span, sum->checked_type, post->virtual_device});
  }
};

}  // namespace

Pass CanonicalizeOps() {
  return CreateRewriterPass(
      [](const Function&, const IRModule&, PassContext&) { return Canonicalizer(); },
      PassInfo{"CanonicalizeOps", 3, {"InferType"}, PassStage::kGraph});
}

}  // namespace kiln::transform
