// SimplifyExpr: bottom-up local rewrites. Operands are simplified before the
// node that uses them, so a chain collapses one link at a time: the node over
// an already collapsed chain sees a chain of two again. A rewrite is made only
// when the result has exactly the checked type of the node it replaces, so
// the users of the node (rebuilt with their old types) stay correctly typed.
//
// Spans: a node that replaces a matched chain gets
// SIBuilder(entry = the chain's outermost node, inputs = {its operand})
// .CreateSpan(), the seed's SimplifyReshape: the spans of every replaced node,
// outermost first. Removing an identity keeps the operand as it is (its own
// span): rebuilding the operand with more spans would make a copy of it that
// other users do not share.
#include "engine/transform/simplify_expr.h"

#include <numeric>
#include <optional>
#include <string>

#include "absl/strings/str_cat.h"
#include "engine/ir/expr_mutator.h"
#include "engine/ir/structural_equal.h"
#include "engine/op/op_registry.h"
#include "engine/op/type_inference.h"
#include "engine/op/type_relations.h"
#include "engine/pass/rewriter_pass.h"
#include "engine/support/status_macros.h"
#include "engine/transform/expr_builder.h"
#include "engine/transform/si_builder.h"

namespace kiln::transform {
namespace {

// The ops this pass matches, looked up once.
struct MatchedOps {
  const OpEntry& reshape = OpRegistry::Global().Get("reshape");
  const OpEntry& squeeze = OpRegistry::Global().Get("squeeze");
  const OpEntry& expand_dims = OpRegistry::Global().Get("expand_dims");
  const OpEntry& transpose = OpRegistry::Global().Get("transpose");
  const OpEntry& cast = OpRegistry::Global().Get("cast");
  const OpEntry& multiply = OpRegistry::Global().Get("multiply");
  const OpEntry& add = OpRegistry::Global().Get("add");
  const OpEntry& subtract = OpRegistry::Global().Get("subtract");
  const OpEntry& divide = OpRegistry::Global().Get("divide");
};

const MatchedOps& Ops() {
  static const MatchedOps ops{};
  return ops;
}

bool SameType(const Expr& a, const Expr& b) {
  return a->checked_type && b->checked_type && StructuralEqual(a->checked_type, b->checked_type);
}

// True when `callee` is reshape, squeeze or expand_dims.
bool IsShapeOnly(const Expr& callee) {
  const MatchedOps& ops = Ops();
  return IsOp(callee, ops.reshape) || IsOp(callee, ops.squeeze) ||
         IsOp(callee, ops.expand_dims);
}

// True when every value of `from` converts to `to` exactly, so a cast through
// `to` and on to anything else gives what a direct cast gives.
bool LosslessCast(DataType from, DataType to) {
  if (from == to || from == DataType::kBool) return true;
  auto int_bits = [](DataType t) {
    switch (t) {
      case DataType::kInt8: case DataType::kUInt8: return 8;
      case DataType::kInt16: case DataType::kUInt16: return 16;
      case DataType::kInt32: case DataType::kUInt32: return 32;
      case DataType::kInt64: case DataType::kUInt64: return 64;
      default: return 0;
    }
  };
  // Integers a float holds exactly: 2^(significand bits).
  auto exact_int_bits = [](DataType t) {
    switch (t) {
      case DataType::kBFloat16: return 8;
      case DataType::kFloat16: return 11;
      case DataType::kFloat32: return 24;
      case DataType::kFloat64: return 53;
      default: return 0;
    }
  };
  if (IsFloat(from)) {
    if (!IsFloat(to)) return false;
    if (to == DataType::kFloat64) return true;
    return to == DataType::kFloat32 && from != DataType::kFloat64;
  }
  int bits = int_bits(from);
  bool is_signed = IsSignedInt(from);
  if (IsFloat(to)) return bits - (is_signed ? 1 : 0) <= exact_int_bits(to);
  if (IsSignedInt(to)) return is_signed ? int_bits(to) >= bits : int_bits(to) > bits;
  if (IsUnsignedInt(to)) return !is_signed && int_bits(to) >= bits;
  return false;
}

class ExprSimplifier : public PostOrderRewriter {
 protected:
  bool KeepSubtree(const ExprNode* expr) const override {
    const auto* func = Expr(expr).as<FunctionNode>();
    return func != nullptr && func->HasNonzeroAttr(kAttrPrimitive);
  }

  Result Rewrite_(const CallNode* /*pre*/, const Expr& post) override {
    Expr current = post;
    // Each step either removes the node (returns an existing operand, which
    // was simplified already) or replaces it with a new one, which may match
    // again (a collapsed cast chain may turn out to be the identity).
    while (current->checked_type) {
      absl::StatusOr<Expr> next = SimplifyOnce(current);
      if (!next.ok()) {
        return absl::InternalError(
            absl::StrCat("SimplifyExpr: ", std::string(next.status().message())));
      }
      if (next->same_as(current)) break;
      current = *next;
    }
    return current;
  }

 private:
  absl::StatusOr<Attrs> AttrsOf(const CallNode* call) {
    return NormalizeAttrs(*OpRegistry::Global().FindCallee(call->op), call->attrs);
  }

  // Builds `op_name(x, attrs)` to replace the chain from `entry` down to `x`,
  // or returns `entry` when the result's type would differ.
  absl::StatusOr<Expr> ReplaceChain(const Expr& entry, const Expr& x, std::string_view op_name,
                                    Attrs attrs) {
    SIBuilder si_builder(entry, {x});
    KILN_ASSIGN_OR_RETURN(Expr replacement,
                          MakeTypedCall(op_name, {x}, std::move(attrs), si_builder.CreateSpan()));
    return SameType(replacement, entry) ? replacement : entry;
  }

  absl::StatusOr<Expr> SimplifyOnce(const Expr& expr) {
    const auto* call = expr.as<CallNode>();
    if (call == nullptr) return expr;
    const MatchedOps& ops = Ops();
    const Expr& op = call->op;
    if (IsShapeOnly(op)) return SimplifyShapeChain(expr, call);
    if (IsOp(op, ops.transpose)) return SimplifyTranspose(expr, call);
    if (IsOp(op, ops.cast)) return SimplifyCast(expr, call);
    if (IsOp(op, ops.multiply) || IsOp(op, ops.add) || IsOp(op, ops.subtract) ||
        IsOp(op, ops.divide)) {
      KILN_ASSIGN_OR_RETURN(Expr simplified, SimplifyIdentity(expr, call));
      if (!simplified.same_as(expr) || !IsOp(op, ops.add)) return simplified;
      return SimplifyConsecutiveAdd(expr, call);
    }
    return expr;
  }

  // (x + c1) + c2 with c1, c2 constant and x a convolution, dense or matmul (an op elementwise
  // ops fuse into): x + (c1 + c2), which FoldConstant makes one constant, so a convolution's bias
  // and a batch norm's shift are one add in the kernel's epilogue. Only after such ops: each
  // rewrite leaves FoldConstant one more constant to evaluate, which a chain of a thousand adds
  // would pay a thousand times for nothing. Float addition is not associative: the result may
  // differ in the last bit, the reassociation TVM's SimplifyExpr (SimplifyConsecutiveAdd) and
  // ONNX Runtime's Conv+Add fusion make too.
  absl::StatusOr<Expr> SimplifyConsecutiveAdd(const Expr& expr, const CallNode* call) {
    const auto* inner = call->args[0].as<CallNode>();
    if (inner == nullptr || !IsOp(inner->op, Ops().add) || inner->args.size() != 2 ||
        !IsConstantTree(call->args[1]) || !IsConstantTree(inner->args[1])) {
      return expr;
    }
    const auto* producer = inner->args[0].as<CallNode>();
    const OpEntry* entry =
        producer == nullptr ? nullptr : OpRegistry::Global().FindCallee(producer->op);
    if (entry == nullptr || entry->pattern != OpPattern::kOutElementwiseFusable) return expr;
    SIBuilder si_builder(expr, {inner->args[0], inner->args[1], call->args[1]});
    Span span = si_builder.CreateSpan();
    KILN_ASSIGN_OR_RETURN(Expr constants,
                          MakeTypedCall("add", {inner->args[1], call->args[1]}, nullptr, span));
    KILN_ASSIGN_OR_RETURN(Expr sum, MakeTypedCall("add", {inner->args[0], constants}, nullptr, span));
    return SameType(sum, expr) ? sum : expr;
  }

  // True when `expr` is a constant or an operator call over constants, at most
  // kMaxConstantTreeDepth calls deep (a bound on the recursion request data can drive).
  static bool IsConstantTree(const Expr& expr, int depth = 0) {
    if (expr.as<ConstantNode>() != nullptr) return true;
    const auto* call = expr.as<CallNode>();
    if (call == nullptr || depth >= kMaxConstantTreeDepth || call->op.as<OpNode>() == nullptr) {
      return false;
    }
    for (const Expr& arg : call->args) {
      if (!IsConstantTree(arg, depth + 1)) return false;
    }
    return true;
  }
  static constexpr int kMaxConstantTreeDepth = 4;

  // reshape / squeeze / expand_dims over another of them: one reshape to the
  // outer node's shape; and any of them that keeps the shape: its operand.
  absl::StatusOr<Expr> SimplifyShapeChain(const Expr& expr, const CallNode* call) {
    const Expr& operand = call->args[0];
    if (SameType(expr, operand)) return operand;
    const auto* inner = operand.as<CallNode>();
    if (inner == nullptr || !IsShapeOnly(inner->op)) return expr;
    AttrValue newshape;
    if (IsOp(call->op, Ops().reshape)) {
      KILN_ASSIGN_OR_RETURN(Attrs attrs, AttrsOf(call));
      newshape = *attrs->Find("newshape");
    } else {
      // squeeze / expand_dims say which axes change, not the result: only a
      // fully static result can be written as a newshape.
      const TensorTypeNode* type = TensorTypeOf(expr);
      if (type == nullptr) return expr;
      std::vector<int64_t> dims;
      for (const Dim& d : type->shape) {
        if (!d.is_static()) return expr;
        dims.push_back(d.value);
      }
      newshape = IntArray(dims);
    }
    return ReplaceChain(expr, inner->args[0], "reshape", MakeAttrs({{"newshape", newshape}}));
  }

  // The permutation of a transpose (empty axes reverse), normalized to [0, rank).
  static std::optional<std::vector<int64_t>> Permutation(const CallNode* call,
                                                         const AttrsNode& attrs) {
    const TensorTypeNode* in = TensorTypeOf(call->args[0]);
    if (in == nullptr) return std::nullopt;
    int64_t rank = static_cast<int64_t>(in->shape.size());
    std::vector<int64_t> axes = IntArrayAttr(attrs, "axes");
    if (axes.empty()) {
      for (int64_t i = rank - 1; i >= 0; --i) axes.push_back(i);
    }
    for (int64_t& a : axes) {
      if (a < 0) a += rank;
    }
    return axes;
  }

  static bool IsIdentityPermutation(const std::vector<int64_t>& axes) {
    for (size_t i = 0; i < axes.size(); ++i) {
      if (axes[i] != static_cast<int64_t>(i)) return false;
    }
    return true;
  }

  // transpose(transpose(x, p), q) reads x's axis p[q[i]] as output axis i.
  absl::StatusOr<Expr> SimplifyTranspose(const Expr& expr, const CallNode* call) {
    KILN_ASSIGN_OR_RETURN(Attrs attrs, AttrsOf(call));
    std::optional<std::vector<int64_t>> outer = Permutation(call, *attrs);
    if (!outer) return expr;
    if (IsIdentityPermutation(*outer) && SameType(expr, call->args[0])) return call->args[0];
    const CallNode* inner = AsCallOf(call->args[0], Ops().transpose);
    if (inner == nullptr) return expr;
    KILN_ASSIGN_OR_RETURN(Attrs inner_attrs, AttrsOf(inner));
    std::optional<std::vector<int64_t>> first = Permutation(inner, *inner_attrs);
    if (!first || first->size() != outer->size()) return expr;
    std::vector<int64_t> combined;
    for (int64_t q : *outer) combined.push_back((*first)[q]);
    const Expr& x = inner->args[0];
    if (IsIdentityPermutation(combined)) return SameType(expr, x) ? x : expr;
    return ReplaceChain(expr, x, "transpose", MakeAttrs({{"axes", IntArray(combined)}}));
  }

  // cast to x's own dtype: x; cast(cast(x, a), b) with a holding every value
  // of x exactly: cast(x, b).
  absl::StatusOr<Expr> SimplifyCast(const Expr& expr, const CallNode* call) {
    const Expr& operand = call->args[0];
    if (SameType(expr, operand)) return operand;
    const CallNode* inner = AsCallOf(operand, Ops().cast);
    if (inner == nullptr) return expr;
    const TensorTypeNode* x_type = TensorTypeOf(inner->args[0]);
    const TensorTypeNode* mid_type = TensorTypeOf(operand);
    if (x_type == nullptr || mid_type == nullptr || !LosslessCast(x_type->dtype, mid_type->dtype)) {
      return expr;
    }
    // A string's text is not a number's: a cast into or out of one never merges (bool -> int ->
    // string prints "1", not what a direct cast would; string -> int8 wraps what it read).
    const TensorTypeNode* result_type = TensorTypeOf(expr);
    if (x_type->dtype == DataType::kString || mid_type->dtype == DataType::kString ||
        result_type == nullptr || result_type->dtype == DataType::kString) {
      return expr;
    }
    KILN_ASSIGN_OR_RETURN(Attrs attrs, AttrsOf(call));
    return ReplaceChain(expr, inner->args[0], "cast", attrs);
  }

  // x * 1, 1 * x, x / 1: x; x + 0, 0 + x, x - 0: x. The constant may have any
  // shape as long as it does not broadcast x to a larger one (type check).
  // x + 0 differs from x only for x = -0 (it gives +0), a difference the
  // comparisons and arithmetic downstream cannot observe except through the
  // sign of a division by it; we accept that, as TVM and XLA's simplifiers do.
  absl::StatusOr<Expr> SimplifyIdentity(const Expr& expr, const CallNode* call) {
    if (call->args.size() != 2) return expr;
    const MatchedOps& ops = Ops();
    bool multiplicative = IsOp(call->op, ops.multiply) || IsOp(call->op, ops.divide);
    double neutral = multiplicative ? 1.0 : 0.0;
    bool commutative = IsOp(call->op, ops.multiply) || IsOp(call->op, ops.add);
    auto is_neutral = [&](const Expr& e) {
      const auto* c = e.as<ConstantNode>();
      return c != nullptr && AllElementsEqual(*c->data, neutral);
    };
    if (is_neutral(call->args[1]) && SameType(expr, call->args[0])) return call->args[0];
    if (commutative && is_neutral(call->args[0]) && SameType(expr, call->args[1])) {
      return call->args[1];
    }
    return expr;
  }
};

}  // namespace

Pass SimplifyExpr() {
  return CreateRewriterPass(
      [](const Function&, const IRModule&, PassContext&) { return ExprSimplifier(); },
      PassInfo{"SimplifyExpr", 2, {"InferType"}, PassStage::kGraph});
}

}  // namespace kiln::transform
