// Recursive structural comparison (loop expressions are shallow).
#include "engine/loop/arith/expr_deep_equal.h"

#include <bit>

#include "engine/loop/buffer.h"

namespace kiln::loop::arith {
namespace {

bool AllEqual(const std::vector<PrimExpr>& a, const std::vector<PrimExpr>& b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (!ExprDeepEqual(a[i], b[i])) return false;
  }
  return true;
}

}  // namespace

bool ExprDeepEqual(const PrimExpr& a, const PrimExpr& b) {
  if (a.same_as(b)) return true;
  if (!a.defined() || !b.defined()) return false;
  if (a->kind() != b->kind() || a->type != b->type) return false;
  switch (a->kind()) {
    case ObjectKind::kIntImm: return a.as<IntImmNode>()->value == b.as<IntImmNode>()->value;
    case ObjectKind::kFloatImm:
      // Bitwise, so 0.0 and -0.0 differ and NaN equals itself.
      return std::bit_cast<uint64_t>(a.as<FloatImmNode>()->value) ==
             std::bit_cast<uint64_t>(b.as<FloatImmNode>()->value);
    case ObjectKind::kStringImm:
      return a.as<StringImmNode>()->value == b.as<StringImmNode>()->value;
    case ObjectKind::kLoopVar: return false;  // variables are equal only to themselves
    case ObjectKind::kBinary: {
      const auto* x = a.as<BinaryNode>();
      const auto* y = b.as<BinaryNode>();
      return x->op == y->op && ExprDeepEqual(x->a, y->a) && ExprDeepEqual(x->b, y->b);
    }
    case ObjectKind::kNot: return ExprDeepEqual(a.as<NotNode>()->a, b.as<NotNode>()->a);
    case ObjectKind::kCast:
      return ExprDeepEqual(a.as<CastNode>()->value, b.as<CastNode>()->value);
    case ObjectKind::kSelect: {
      const auto* x = a.as<SelectNode>();
      const auto* y = b.as<SelectNode>();
      return ExprDeepEqual(x->cond, y->cond) && ExprDeepEqual(x->true_value, y->true_value) &&
             ExprDeepEqual(x->false_value, y->false_value);
    }
    case ObjectKind::kIntrinsicCall: {
      const auto* x = a.as<IntrinsicCallNode>();
      const auto* y = b.as<IntrinsicCallNode>();
      return x->intrinsic == y->intrinsic && AllEqual(x->args, y->args);
    }
    case ObjectKind::kBufferLoad: {
      const auto* x = a.as<BufferLoadNode>();
      const auto* y = b.as<BufferLoadNode>();
      return x->buffer.same_as(y->buffer) && AllEqual(x->indices, y->indices);
    }
    case ObjectKind::kRamp: {
      const auto* x = a.as<RampNode>();
      const auto* y = b.as<RampNode>();
      return x->lanes == y->lanes && ExprDeepEqual(x->base, y->base) &&
             ExprDeepEqual(x->stride, y->stride);
    }
    case ObjectKind::kBroadcast: {
      const auto* x = a.as<BroadcastNode>();
      const auto* y = b.as<BroadcastNode>();
      return x->lanes == y->lanes && ExprDeepEqual(x->value, y->value);
    }
    default: return false;
  }
}

}  // namespace kiln::loop::arith
