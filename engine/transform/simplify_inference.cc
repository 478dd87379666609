// SimplifyInference: normalization ops unpacked into arithmetic.
//
// With x the data, r its rank, c the channel axis and eps the epsilon:
//   batch_norm(x, gamma, beta, mean, var):
//     scale = rsqrt(var + eps) * gamma          per channel, shape (C)
//     shift = beta - mean * scale               per channel
//     out   = x * expand(scale) + expand(shift)
//   where expand(v) = expand_dims(v, axis=1, num_newaxis=r-c-1) lines the
//   channel vector up with axis c (no expand_dims when c is the last axis).
//   instance_norm(x, gamma, beta): over the axes a other than 0 and c,
//     centered = x - mean(x, a, keepdims)
//     out = centered * rsqrt(mean(centered * centered, a, keepdims) + eps)
//           * expand(gamma) + expand(beta)
// layer_norm stays one op: its compute is one kernel that computes each row's
// statistics inside its row loop (te::kRowNormalizationTag); unpacked, it was
// four kernels that each read the whole tensor (0.77 -> 0.15 ms of a
// transformer encoder's 15).
// The per-channel factors only depend on constants in inference graphs, so
// FoldConstant later reduces batch_norm to one multiply and one add.
#include "engine/transform/simplify_inference.h"

#include <string>

#include "absl/strings/str_cat.h"
#include "engine/ir/expr_mutator.h"
#include "engine/op/op_registry.h"
#include "engine/op/type_inference.h"
#include "engine/op/type_relations.h"
#include "engine/pass/rewriter_pass.h"
#include "engine/support/status_macros.h"
#include "engine/transform/expr_builder.h"
#include "engine/transform/si_builder.h"

namespace kiln::transform {
namespace {

// `v` (a vector along axis `axis` of a rank-`rank` tensor) with trailing unit
// dims, so it broadcasts along that axis.
absl::StatusOr<Expr> ExpandToAxis(const Expr& v, int64_t rank, int64_t axis, const Span& span) {
  int64_t trailing = rank - axis - 1;
  if (trailing == 0) return v;
  return MakeTypedCall("expand_dims", {v},
                       MakeAttrs({{"axis", int64_t{1}}, {"num_newaxis", trailing}}), span);
}

// (x - mean(x)) * rsqrt(var(x) + eps) over `axes`, both reductions keeping dims.
absl::StatusOr<Expr> Normalize(const Expr& x, const std::vector<int64_t>& axes, DataType dtype,
                               double epsilon, const Span& span) {
  Attrs reduce = MakeAttrs({{"axis", IntArray(axes)}, {"keepdims", true}});
  KILN_ASSIGN_OR_RETURN(Expr mean, MakeTypedCall("mean", {x}, reduce, span));
  KILN_ASSIGN_OR_RETURN(Expr centered, MakeTypedCall("subtract", {x, mean}, nullptr, span));
  KILN_ASSIGN_OR_RETURN(Expr squared,
                        MakeTypedCall("multiply", {centered, centered}, nullptr, span));
  KILN_ASSIGN_OR_RETURN(Expr variance, MakeTypedCall("mean", {squared}, reduce, span));
  KILN_ASSIGN_OR_RETURN(
      Expr shifted,
      MakeTypedCall("add", {variance, MakeTypedScalar(dtype, epsilon, span)}, nullptr, span));
  KILN_ASSIGN_OR_RETURN(Expr inv_std, MakeTypedCall("rsqrt", {shifted}, nullptr, span));
  return MakeTypedCall("multiply", {centered, inv_std}, nullptr, span);
}

absl::StatusOr<Expr> UnpackBatchNorm(const CallNode& call, const AttrsNode& attrs,
                                     const TensorTypeNode& data_type) {
  // New nodes are built with the layer's span (null when SIBuilder is off);
  // RecursivelyFillSpan below then only checks that nothing was missed.
  SIBuilder si_builder(call.span);
  const Span span = si_builder.CreateSpan();
  const Expr& data = call.args[0];
  const Expr& gamma = call.args[1];
  const Expr& beta = call.args[2];
  const Expr& moving_mean = call.args[3];
  const Expr& moving_var = call.args[4];
  int64_t rank = static_cast<int64_t>(data_type.shape.size());
  KILN_ASSIGN_OR_RETURN(int64_t axis, NormalizeAxis(IntAttr(attrs, "axis"), rank));
  Expr epsilon = MakeTypedScalar(data_type.dtype, FloatAttr(attrs, "epsilon"), span);
  KILN_ASSIGN_OR_RETURN(Expr var_add_eps,
                        MakeTypedCall("add", {moving_var, epsilon}, nullptr, span));
  KILN_ASSIGN_OR_RETURN(Expr inv_std, MakeTypedCall("rsqrt", {var_add_eps}, nullptr, span));
  KILN_ASSIGN_OR_RETURN(Expr scale, MakeTypedCall("multiply", {inv_std, gamma}, nullptr, span));
  KILN_ASSIGN_OR_RETURN(Expr mean_scaled,
                        MakeTypedCall("multiply", {moving_mean, scale}, nullptr, span));
  KILN_ASSIGN_OR_RETURN(Expr shift, MakeTypedCall("subtract", {beta, mean_scaled}, nullptr, span));
  KILN_ASSIGN_OR_RETURN(Expr scale_b, ExpandToAxis(scale, rank, axis, span));
  KILN_ASSIGN_OR_RETURN(Expr scaled, MakeTypedCall("multiply", {data, scale_b}, nullptr, span));
  KILN_ASSIGN_OR_RETURN(Expr shift_b, ExpandToAxis(shift, rank, axis, span));
  KILN_ASSIGN_OR_RETURN(Expr out, MakeTypedCall("add", {scaled, shift_b}, nullptr, span));
  // As the seed's BatchNormToInferUnpack: every node between the result and
  // the batch_norm's operands is new and carries the batch_norm's span.
  return si_builder.RecursivelyFillSpan(out, {data, gamma, beta, moving_mean, moving_var});
}

absl::StatusOr<Expr> UnpackInstanceNorm(const CallNode& call, const AttrsNode& attrs,
                                        const TensorTypeNode& data_type) {
  // New nodes are built with the layer's span (null when SIBuilder is off);
  // RecursivelyFillSpan below then only checks that nothing was missed.
  SIBuilder si_builder(call.span);
  const Span span = si_builder.CreateSpan();
  const Expr& data = call.args[0];
  int64_t rank = static_cast<int64_t>(data_type.shape.size());
  KILN_ASSIGN_OR_RETURN(int64_t axis, NormalizeAxis(IntAttr(attrs, "axis"), rank));
  std::vector<int64_t> axes;
  for (int64_t d = 1; d < rank; ++d) {
    if (d != axis) axes.push_back(d);
  }
  KILN_ASSIGN_OR_RETURN(Expr out,
                        Normalize(data, axes, data_type.dtype, FloatAttr(attrs, "epsilon"), span));
  KILN_ASSIGN_OR_RETURN(Expr gamma, ExpandToAxis(call.args[1], rank, axis, span));
  KILN_ASSIGN_OR_RETURN(out, MakeTypedCall("multiply", {out, gamma}, nullptr, span));
  KILN_ASSIGN_OR_RETURN(Expr beta, ExpandToAxis(call.args[2], rank, axis, span));
  KILN_ASSIGN_OR_RETURN(out, MakeTypedCall("add", {out, beta}, nullptr, span));
  return si_builder.RecursivelyFillSpan(out, call.args);
}

class InferenceSimplifier : public PostOrderRewriter {
 protected:
  // Fused functions are finished kernels: never rewritten from outside.
  bool KeepSubtree(const ExprNode* expr) const override {
    const auto* func = Expr(expr).as<FunctionNode>();
    return func != nullptr && func->HasNonzeroAttr(kAttrPrimitive);
  }

  Result Rewrite_(const CallNode* /*pre*/, const Expr& post) override {
    static const OpEntry& batch_norm = OpRegistry::Global().Get("nn.batch_norm");
    static const OpEntry& instance_norm = OpRegistry::Global().Get("nn.instance_norm");
    const auto* call = post.as<CallNode>();
    using Unpack =
        absl::StatusOr<Expr> (*)(const CallNode&, const AttrsNode&, const TensorTypeNode&);
    Unpack unpack = IsOp(call->op, batch_norm)      ? UnpackBatchNorm
                    : IsOp(call->op, instance_norm) ? UnpackInstanceNorm
                                                    : nullptr;
    if (unpack == nullptr) return post;
    const OpEntry& entry = *OpRegistry::Global().FindCallee(call->op);
    // Untyped calls stay (the pass requires InferType; nothing to go on here).
    const TensorTypeNode* data_type = TensorTypeOf(call->args[0]);
    if (data_type == nullptr || !post->checked_type) return post;
    absl::StatusOr<Attrs> attrs = NormalizeAttrs(entry, call->attrs);
    absl::StatusOr<Expr> out =
        attrs.ok() ? unpack(*call, **attrs, *data_type) : absl::StatusOr<Expr>(attrs.status());
    if (!out.ok()) {
      return absl::InternalError(absl::StrCat("SimplifyInference: cannot unpack ", entry.name,
                                              ": ", std::string(out.status().message())));
    }
    return *out;
  }
};

}  // namespace

Pass SimplifyInference() {
  return CreateRewriterPass(
      [](const Function&, const IRModule&, PassContext&) {
        return InferenceSimplifier();
      },
      PassInfo{"SimplifyInference", 0, {"InferType"}, PassStage::kGraph});
}

}  // namespace kiln::transform
