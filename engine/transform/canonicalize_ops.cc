// CanonicalizeOps: a post-order rewriter over operator calls.
#include "engine/transform/canonicalize_ops.h"

#include "engine/ir/expr_mutator.h"
#include "engine/transform/expr_builder.h"

namespace kiln::transform {
namespace {

class Canonicalizer : public PostOrderRewriter {
 public:
  absl::Status status() const { return status_; }

 protected:
  Expr Rewrite_(const CallNode* /*pre*/, const Expr& post) override {
    const auto* call = post.as<CallNode>();
    const auto* op = call->op.as<OpNode>();
    if (op == nullptr || op->name != "nn.bias_add" || call->args.size() != 2) return post;
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
      absl::StatusOr<Expr> expanded = MakeTypedCall(
          "expand_dims", {bias},
          MakeAttrs({{"axis", AttrValue(int64_t{1})}, {"num_newaxis", AttrValue(new_axes)}}),
          post->span);
      if (!expanded.ok()) return Fail(expanded.status(), post);
      bias = *expanded;
    }
    absl::StatusOr<Expr> sum = MakeTypedCall("add", {call->args[0], bias}, nullptr, post->span);
    if (!sum.ok()) return Fail(sum.status(), post);
    return WithFields(*sum, ExprFields{post->span, (*sum)->checked_type, post->virtual_device});
  }

 private:
  Expr Fail(const absl::Status& status, const Expr& post) {
    if (status_.ok()) status_ = status;
    return post;
  }
  absl::Status status_;
};

}  // namespace

Pass CanonicalizeOps() {
  return CreateFunctionPass(
      [](const Function& func, const IRModule&, PassContext&) -> absl::StatusOr<Function> {
        Canonicalizer canonicalizer;
        Expr result = canonicalizer.VisitExpr(func);
        if (!canonicalizer.status().ok()) return canonicalizer.status();
        return Downcast<FunctionNode>(result);
      },
      PassInfo{"CanonicalizeOps", 3, {"InferType"}, PassStage::kGraph});
}

}  // namespace kiln::transform
