// FoldScaleAxis: per-channel scales folded into layer weights.
//
// Why it is correct: a layer is linear in its weight, and each output channel
// c depends only on weight slice c (conv: w[c, ...]; dense: w[c, :]), so
// scaling output channel c by s[c] equals scaling slice c of the weight by
// s[c]. Likewise each input channel k meets only weight slice k along the
// reduced axis (conv with one group: w[:, k, ...]; dense: w[:, k]); padding
// is zeros, and 0 * s = 0. A bias added per channel is scaled with the layer
// ((y + b) * s = y * s + b * s), and relu commutes with a positive scale.
//
// The rewriter works bottom-up. At a multiply it walks down the chain of
// single-use relu / add / bias_add nodes to a layer (iteratively: a long
// chain costs no stack), checks the scale and every bias against the layer's
// channel axis, and rebuilds the chain from the layer up. At a layer it looks
// for a single-use multiply feeding its data. Uses are counted on the input
// function; a rewritten node is mapped back to the node it stands for, so a
// layer that was already rewritten (scaled twice) still has a use count.
#include "engine/transform/fold_scale_axis.h"

#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "absl/strings/str_cat.h"
#include "engine/ir/expr_mutator.h"
#include "engine/ir/expr_visitor.h"
#include "engine/ir/structural_equal.h"
#include "engine/op/op_registry.h"
#include "engine/op/type_inference.h"
#include "engine/pass/rewriter_pass.h"
#include "engine/support/status_macros.h"
#include "engine/transform/expr_builder.h"
#include "engine/transform/si_builder.h"

namespace kiln::transform {
namespace {

// The ops this pass tells apart within a ScaleAxisRule, looked up once.
struct MatchedOps {
  const OpEntry& multiply = OpRegistry::Global().Get("multiply");
  const OpEntry& add = OpRegistry::Global().Get("add");
  const OpEntry& relu = OpRegistry::Global().Get("nn.relu");
  const OpEntry& bias_add = OpRegistry::Global().Get("nn.bias_add");
};

const MatchedOps& Ops() {
  static const MatchedOps ops{};
  return ops;
}

// The registry entry of the operator `expr` calls; null when `expr` is not a
// call of a registered operator.
const OpEntry* CalleeEntry(const Expr& expr) {
  const auto* call = expr.as<CallNode>();
  return call == nullptr ? nullptr : OpRegistry::Global().FindCallee(call->op);
}

ScaleAxisRule RuleOf(const Expr& expr) {
  const OpEntry* entry = CalleeEntry(expr);
  return entry == nullptr ? ScaleAxisRule::kNone : entry->scale_axis;
}

bool IsLayer(const Expr& expr) {
  ScaleAxisRule rule = RuleOf(expr);
  return rule == ScaleAxisRule::kConvLayer || rule == ScaleAxisRule::kDenseLayer ||
         rule == ScaleAxisRule::kMatmulLayer;
}

// The ops a backward fold may pass through on its way down to the layer.
bool IsBackwardLink(const Expr& expr) { return RuleOf(expr) == ScaleAxisRule::kChannelwise; }

// True when `expr` is a call of `op`.
bool Calls(const Expr& expr, const OpEntry& op) { return AsCallOf(expr, op) != nullptr; }

int64_t IntAttrOr(const Attrs& attrs, std::string_view key, int64_t fallback) {
  const AttrValue* value = attrs ? attrs->Find(key) : nullptr;
  return value != nullptr && value->is<int64_t>() ? value->get<int64_t>() : fallback;
}

bool BoolAttrOr(const Attrs& attrs, std::string_view key, bool fallback) {
  const AttrValue* value = attrs ? attrs->Find(key) : nullptr;
  return value != nullptr && value->is<bool>() ? value->get<bool>() : fallback;
}

bool SameType(const Expr& a, const Expr& b) {
  return a->checked_type && b->checked_type && StructuralEqual(a->checked_type, b->checked_type);
}

int64_t Rank(const TensorTypeNode& type) { return static_cast<int64_t>(type.shape.size()); }

// True when `expr` reads no variable: only constants, operator calls (of ops
// that give the same result every time) and tuples of them. Such a value is
// known at compile time, so FoldConstant can fold it into the weight.
bool IsConstantExpr(const Expr& expr) {
  bool constant = true;
  PostOrderVisit(expr, [&](const Expr& e) {
    if (e.as<ConstantNode>() || e.as<OpNode>() || e.as<TupleNode>() || e.as<TupleGetItemNode>()) {
      return;
    }
    if (const OpEntry* entry = CalleeEntry(e); entry != nullptr && !entry->stateful) return;
    constant = false;
  });
  return constant;
}

// True when every value of `scale` is known to be > 0: a constant, possibly
// under ops that only rearrange it, all of whose elements are positive.
bool KnownPositive(Expr scale) {
  while (RuleOf(scale) == ScaleAxisRule::kRearrange) scale = scale.as<CallNode>()->args[0];
  const auto* constant = scale.as<ConstantNode>();
  if (constant == nullptr) return false;
  const TensorDataNode& data = *constant->data;
  if (data.dtype == DataType::kBool) return false;
  for (int64_t i = 0; i < data.NumElements(); ++i) {
    if (!(ConstantElement(data, i) > 0)) return false;  // NaN is not positive either
  }
  return data.NumElements() > 0;
}

// For `type` broadcast against a rank-`rank` tensor with `extent` channels
// along `axis`: its own extent along that axis (1 or `extent`) when it varies
// along no other axis and adds no axis; nullopt otherwise.
std::optional<int64_t> ChannelExtent(const TensorTypeNode& type, int64_t rank, int64_t axis,
                                     int64_t extent) {
  int64_t own_rank = Rank(type);
  if (own_rank > rank) return std::nullopt;
  int64_t found = 1;
  for (int64_t i = 0; i < own_rank; ++i) {
    const Dim& dim = type.shape[i];
    if (!dim.is_static()) return std::nullopt;
    if (dim.value == 1) continue;
    if (i + rank - own_rank != axis || dim.value != extent) return std::nullopt;
    found = extent;
  }
  return found;
}

// Ones of `rank` with `extent` at `axis`: the shape a per-channel factor
// takes to broadcast along that axis of a rank-`rank` tensor.
std::vector<int64_t> AxisShape(int64_t rank, int64_t axis, int64_t extent) {
  std::vector<int64_t> shape(static_cast<size_t>(rank), 1);
  shape[static_cast<size_t>(axis)] = extent;
  return shape;
}

// True when `shape` broadcast against a tensor of rank target.size() lines up
// like `target` does (it is `target` without some leading ones).
bool LinesUpAs(const std::vector<Dim>& shape, const std::vector<int64_t>& target) {
  if (shape.size() > target.size()) return false;
  size_t leading = target.size() - shape.size();
  for (size_t i = 0; i < leading; ++i) {
    if (target[i] != 1) return false;
  }
  for (size_t i = 0; i < shape.size(); ++i) {
    if (!shape[i].is_static() || shape[i].value != target[leading + i]) return false;
  }
  return true;
}

// `scale` reshaped to `target`, or `scale` itself when it already lines up.
absl::StatusOr<Expr> AlignScale(const Expr& scale, const std::vector<int64_t>& target,
                                const Span& span) {
  const TensorTypeNode* type = TensorTypeOf(scale);
  if (type != nullptr && LinesUpAs(type->shape, target)) return scale;
  return MakeTypedCall("reshape", {scale}, MakeAttrs({{"newshape", IntArray(target)}}), span);
}

// The span of a node that stands for all of `origins` (SIBuilder: null when
// span keeping is switched off).
Span MergedSpan(const std::vector<Span>& origins) {
  return SIBuilder(MakeSequentialSpan(origins)).CreateSpan();
}

// Where a layer L(data, weight)'s channels sit. -1: that direction does not
// fold for this call.
struct LayerAxes {
  int64_t out_axis = -1;         // backward: channels of the result...
  int64_t weight_out_axis = -1;  // ...and of the weight
  int64_t data_axis = -1;        // forward: reduced axis of the data...
  int64_t weight_in_axis = -1;   // ...and of the weight
};

std::optional<LayerAxes> LayerAxesOf(const Expr& layer) {
  const auto* call = layer.as<CallNode>();
  ScaleAxisRule rule = RuleOf(layer);
  if (call == nullptr || !IsLayer(layer) || call->args.size() != 2) return std::nullopt;
  const TensorTypeNode* data = TensorTypeOf(call->args[0]);
  const TensorTypeNode* weight = TensorTypeOf(call->args[1]);
  const TensorTypeNode* out = TensorTypeOf(layer);
  if (data == nullptr || weight == nullptr || out == nullptr) return std::nullopt;
  int64_t data_rank = Rank(*data), weight_rank = Rank(*weight), out_rank = Rank(*out);
  LayerAxes axes;
  if (rule == ScaleAxisRule::kConvLayer) {
    if (weight_rank != out_rank || out_rank < 2) return std::nullopt;
    axes.out_axis = 1;
    axes.weight_out_axis = 0;
    // With groups, input channel k meets only the weights of its group, at
    // weight channel k % (C / groups): not one slice per input channel.
    if (IntAttrOr(call->attrs, "groups", 1) == 1) {
      axes.data_axis = 1;
      axes.weight_in_axis = 1;
    }
  } else if (rule == ScaleAxisRule::kDenseLayer) {
    if (weight_rank != 2 || data_rank < 1 || out_rank < 1) return std::nullopt;
    axes = {out_rank - 1, 0, data_rank - 1, 1};
  } else {  // nn.matmul
    if (!IsConstantExpr(call->args[1]) || data_rank < 1 || weight_rank < 1 || out_rank < 1) {
      return std::nullopt;
    }
    bool transpose_a = BoolAttrOr(call->attrs, "transpose_a", false);
    bool transpose_b = BoolAttrOr(call->attrs, "transpose_b", false);
    // A 1-D b gives the result no column axis to scale.
    if (weight_rank >= 2) {
      axes.out_axis = out_rank - 1;
      axes.weight_out_axis = transpose_b ? weight_rank - 2 : weight_rank - 1;
    }
    axes.data_axis = data_rank >= 2 && transpose_a ? data_rank - 2 : data_rank - 1;
    axes.weight_in_axis = weight_rank == 1 ? 0 : transpose_b ? weight_rank - 1 : weight_rank - 2;
  }
  return axes;
}

class ScaleAxisFolder : public PostOrderRewriter {
 public:
  explicit ScaleAxisFolder(const Function& func) {
    ++uses_[func->body.get()];
    PostOrderVisit(func, [&](const Expr& expr) {
      auto use = [&](const Expr& operand) {
        if (operand) ++uses_[operand.get()];
      };
      if (const auto* call = expr.as<CallNode>()) {
        use(call->op);
        for (const Expr& arg : call->args) use(arg);
      } else if (const auto* tuple = expr.as<TupleNode>()) {
        for (const Expr& element : tuple->elements) use(element);
      } else if (const auto* item = expr.as<TupleGetItemNode>()) {
        use(item->tuple);
      } else if (const auto* let = expr.as<LetNode>()) {
        use(let->value);
        use(let->body);
      } else if (const auto* branch = expr.as<IfNode>()) {
        use(branch->cond);
        use(branch->true_branch);
        use(branch->false_branch);
      } else if (const auto* fn = expr.as<FunctionNode>()) {
        use(fn->body);
      }
    });
  }

 protected:
  // Fused functions are finished kernels: never rewritten from outside.
  bool KeepSubtree(const ExprNode* expr) const override {
    const auto* func = Expr(expr).as<FunctionNode>();
    return func != nullptr && func->HasNonzeroAttr(kAttrPrimitive);
  }

  Result Rewrite_(const CallNode* pre, const Expr& post) override {
    Expr result = post;
    if (post->checked_type) {
      absl::StatusOr<Expr> folded = Calls(post, Ops().multiply) ? FoldBackward(post)
                                    : IsLayer(post)             ? FoldForward(post)
                                                                : absl::StatusOr<Expr>(Expr());
      if (!folded.ok()) {
        return absl::InternalError(absl::StrCat("FoldScaleAxis: cannot fold into ",
                                                CalleeEntry(post)->name, ": ",
                                                std::string(folded.status().message())));
      }
      if (*folded) result = *folded;
    }
    origin_[result.get()] = pre;
    return result;
  }

 private:
  // How many users the input node that `post` stands for has (0 when `post`
  // stands for no input node: treated as not foldable).
  int64_t UsesOf(const Expr& post) const {
    auto origin = origin_.find(post.get());
    if (origin == origin_.end()) return 0;
    auto uses = uses_.find(origin->second);
    return uses == uses_.end() ? 0 : uses->second;
  }

  // A node of the chain between the scale multiply and the layer.
  struct Link {
    Expr node;
    int chain_index;  // which operand continues the chain (the other is the bias)
  };

  // multiply(E, s) with E a single-use chain of relu / add / bias_add ending
  // in a layer; null when the pattern does not apply.
  absl::StatusOr<Expr> FoldBackward(const Expr& multiply) {
    const auto* mul = multiply.as<CallNode>();
    if (mul->args.size() != 2) return Expr();
    int chain_index = -1;
    for (int i : {0, 1}) {
      const Expr& top = mul->args[i];
      if ((IsLayer(top) || IsBackwardLink(top)) && SameType(top, multiply) &&
          IsConstantExpr(mul->args[1 - i])) {
        chain_index = i;
        break;
      }
    }
    if (chain_index < 0) return Expr();
    const Expr& scale = mul->args[1 - chain_index];

    std::vector<Link> links;
    Expr layer = mul->args[chain_index];
    const MatchedOps& ops = Ops();
    while (!IsLayer(layer)) {
      if (UsesOf(layer) != 1 || !SameType(layer, multiply)) return Expr();
      const auto* call = layer.as<CallNode>();
      int next = 0;
      if (Calls(layer, ops.add)) {
        // The operand that continues the chain has the full type; prefer the
        // first when both could (the other is then checked as a bias).
        next = -1;
        for (int i : {0, 1}) {
          const Expr& operand = call->args[i];
          if ((IsLayer(operand) || IsBackwardLink(operand)) && SameType(operand, multiply)) {
            next = i;
            break;
          }
        }
        if (next < 0) return Expr();
      } else if (!Calls(layer, ops.relu) && !Calls(layer, ops.bias_add)) {
        return Expr();
      }
      links.push_back({layer, next});
      layer = call->args[next];
    }
    if (UsesOf(layer) != 1 || !SameType(layer, multiply)) return Expr();

    std::optional<LayerAxes> axes = LayerAxesOf(layer);
    if (!axes || axes->out_axis < 0) return Expr();
    const TensorTypeNode& out_type = *TensorTypeOf(layer);
    const Dim& channels = out_type.shape[axes->out_axis];
    const TensorTypeNode* scale_type = TensorTypeOf(scale);
    if (!channels.is_static() || scale_type == nullptr) return Expr();
    int64_t rank = Rank(out_type);
    std::optional<int64_t> extent =
        ChannelExtent(*scale_type, rank, axes->out_axis, channels.value);
    if (!extent) return Expr();
    for (const Link& link : links) {
      const auto* call = link.node.as<CallNode>();
      if (Calls(link.node, ops.relu) && !KnownPositive(scale)) return Expr();
      if (Calls(link.node, ops.bias_add)) {
        int64_t axis = IntAttrOr(call->attrs, "axis", 1);
        if (call->args.size() != 2 || (axis < 0 ? axis + rank : axis) != axes->out_axis) {
          return Expr();
        }
      }
      if (Calls(link.node, ops.add)) {
        const TensorTypeNode* bias = TensorTypeOf(call->args[1 - link.chain_index]);
        if (bias == nullptr ||
            !ChannelExtent(*bias, rank, axes->out_axis, channels.value).has_value()) {
          return Expr();
        }
      }
    }

    // Build bottom-up: the layer over the scaled weight, then each link.
    const auto* layer_call = layer.as<CallNode>();
    const Span weight_span = MergedSpan({mul->span, layer->span});
    const Expr& weight = layer_call->args[1];
    KILN_ASSIGN_OR_RETURN(
        Expr weight_scale,
        AlignScale(scale, AxisShape(Rank(*TensorTypeOf(weight)), axes->weight_out_axis, *extent),
                   weight_span));
    KILN_ASSIGN_OR_RETURN(Expr scaled_weight,
                          MakeTypedCall("multiply", {weight, weight_scale}, nullptr, weight_span));
    if (!SameType(scaled_weight, weight)) return Expr();
    KILN_ASSIGN_OR_RETURN(
        Expr result,
        MakeTypedCall(CalleeEntry(layer)->name, {layer_call->args[0], scaled_weight},
                      layer_call->attrs, MergedSpan({layer->span, mul->span})));
    for (auto link = links.rbegin(); link != links.rend(); ++link) {
      const auto* call = link->node.as<CallNode>();
      const std::string& name = CalleeEntry(link->node)->name;
      const Span span = MergedSpan({link->node->span, mul->span});
      if (Calls(link->node, ops.relu)) {
        KILN_ASSIGN_OR_RETURN(result, MakeTypedCall(name, {result}, call->attrs, span));
        continue;
      }
      const Span bias_span = MergedSpan({mul->span, link->node->span});
      Expr bias_scale = scale;
      if (Calls(link->node, ops.bias_add)) {
        KILN_ASSIGN_OR_RETURN(bias_scale, AlignScale(scale, {*extent}, bias_span));
      }
      const Expr& bias = call->args[1 - link->chain_index];
      KILN_ASSIGN_OR_RETURN(Expr scaled_bias,
                            MakeTypedCall("multiply", {bias, bias_scale}, nullptr, bias_span));
      std::vector<Expr> args = call->args;
      args[link->chain_index] = result;
      args[1 - link->chain_index] = scaled_bias;
      KILN_ASSIGN_OR_RETURN(result, MakeTypedCall(name, std::move(args), call->attrs, span));
    }
    if (!SameType(result, multiply)) return Expr();
    return result;
  }

  // L(multiply(x, s), w) with the multiply used only here; null when the
  // pattern does not apply.
  absl::StatusOr<Expr> FoldForward(const Expr& layer) {
    std::optional<LayerAxes> axes = LayerAxesOf(layer);
    if (!axes || axes->data_axis < 0) return Expr();
    const auto* layer_call = layer.as<CallNode>();
    const Expr& scaled_data = layer_call->args[0];
    if (!Calls(scaled_data, Ops().multiply) || UsesOf(scaled_data) != 1) return Expr();
    const auto* mul = scaled_data.as<CallNode>();
    if (mul->args.size() != 2) return Expr();
    int data_index = -1;
    for (int i : {0, 1}) {
      if (SameType(mul->args[i], scaled_data) && IsConstantExpr(mul->args[1 - i])) {
        data_index = i;
        break;
      }
    }
    if (data_index < 0) return Expr();
    const Expr& data = mul->args[data_index];
    const Expr& scale = mul->args[1 - data_index];

    const TensorTypeNode& data_type = *TensorTypeOf(data);
    const Dim& channels = data_type.shape[axes->data_axis];
    const TensorTypeNode* scale_type = TensorTypeOf(scale);
    if (!channels.is_static() || scale_type == nullptr) return Expr();
    std::optional<int64_t> extent =
        ChannelExtent(*scale_type, Rank(data_type), axes->data_axis, channels.value);
    if (!extent) return Expr();

    const Span weight_span = MergedSpan({scaled_data->span, layer->span});
    const Expr& weight = layer_call->args[1];
    KILN_ASSIGN_OR_RETURN(
        Expr weight_scale,
        AlignScale(scale, AxisShape(Rank(*TensorTypeOf(weight)), axes->weight_in_axis, *extent),
                   weight_span));
    KILN_ASSIGN_OR_RETURN(Expr scaled_weight,
                          MakeTypedCall("multiply", {weight, weight_scale}, nullptr, weight_span));
    if (!SameType(scaled_weight, weight)) return Expr();
    KILN_ASSIGN_OR_RETURN(
        Expr result, MakeTypedCall(CalleeEntry(layer)->name, {data, scaled_weight},
                                   layer_call->attrs,
                                   MergedSpan({layer->span, scaled_data->span})));
    if (!SameType(result, layer)) return Expr();
    return result;
  }

  // Users of each node of the input function (operator handles included,
  // harmlessly), and the input node each rewritten node stands for.
  std::unordered_map<const ExprNode*, int64_t> uses_;
  std::unordered_map<const ExprNode*, const ExprNode*> origin_;
};

}  // namespace

Pass FoldScaleAxis() {
  return CreateRewriterPass(
      [](const Function& func, const IRModule&, PassContext&) { return ScaleAxisFolder(func); },
      PassInfo{"FoldScaleAxis", 3, {"InferType"}, PassStage::kGraph});
}

}  // namespace kiln::transform
