// The LowerIntrin loop pass: an expression rewriter applied bottom-up.
#include "engine/loop_transform/lower_intrin.h"

#include <vector>

#include "engine/loop/functor.h"
#include "engine/loop_transform/prim_func_pass.h"

namespace kiln::loop::transform {
namespace {

bool IsHalfPrecision(DataType dtype) {
  return dtype == DataType::kFloat16 || dtype == DataType::kBFloat16;
}

// Functions code generation reaches through libm (or LLVM intrinsics that
// lower to libm calls) only for float32 and float64.
bool NeedsSinglePrecision(Intrinsic intrinsic) {
  switch (intrinsic) {
    case Intrinsic::kExp:
    case Intrinsic::kLog:
    case Intrinsic::kTanh:
    case Intrinsic::kErf:
    case Intrinsic::kPow:
    case Intrinsic::kSin:
    case Intrinsic::kCos:
    case Intrinsic::kTan:
    case Intrinsic::kAsin:
    case Intrinsic::kAcos:
    case Intrinsic::kAtan:
    case Intrinsic::kSinh:
    case Intrinsic::kCosh:
    case Intrinsic::kAsinh:
    case Intrinsic::kAcosh:
    case Intrinsic::kAtanh:
    case Intrinsic::kFmod:
      return true;
    default:
      return false;
  }
}

class IntrinsicLowerer final : public StmtExprMutator {
 protected:
  PrimExpr VisitIntrinsicCall_(const IntrinsicCallNode* op, const PrimExpr& self) override {
    PrimExpr visited = StmtExprMutator::VisitIntrinsicCall_(op, self);
    const auto* call = visited.as<IntrinsicCallNode>();
    return Lower(call->intrinsic, call->args, call->type, call->span, visited);
  }

 private:
  // `call` itself when nothing applies.
  PrimExpr Lower(Intrinsic intrinsic, const std::vector<PrimExpr>& args, const PrimType& type,
                 const Span& span, const PrimExpr& call) {
    const PrimExpr& x = args[0];
    PrimType arg_type = x->type;
    if (IsHalfPrecision(arg_type.dtype) && NeedsSinglePrecision(intrinsic)) {
      PrimType wide{DataType::kFloat32, arg_type.lanes};
      std::vector<PrimExpr> wide_args;
      for (const PrimExpr& arg : args) wide_args.push_back(MakeCast(wide, arg, span));
      PrimExpr wide_call = MakeIntrinsic(intrinsic, wide_args, span);
      PrimExpr lowered = Lower(intrinsic, wide_args, wide, span, wide_call);
      return MakeCast(type, lowered, span);
    }
    switch (intrinsic) {
      case Intrinsic::kSigmoid: {
        // Kept whole for code generation, which divides by 1 + exp(-|x|), in [1, 2];
        // float16 / bfloat16 in float32 between casts.
        if (IsHalfPrecision(arg_type.dtype)) {
          PrimType wide{DataType::kFloat32, arg_type.lanes};
          return MakeCast(type, MakeIntrinsic(intrinsic, {MakeCast(wide, x, span)}, span), span);
        }
        return call;
      }
      case Intrinsic::kRsqrt:
        return MakeBinary(BinaryOp::kDiv, MakeConst(arg_type, 1.0, span),
                          MakeIntrinsic(Intrinsic::kSqrt, {x}, span), span);
      case Intrinsic::kPow: {
        const PrimExpr& exponent = args[1];
        PrimExpr scalar = exponent;
        if (const auto* broadcast = exponent.as<BroadcastNode>()) scalar = broadcast->value;
        const auto* imm = scalar.as<FloatImmNode>();
        if (imm != nullptr && imm->value == 2.0) return MakeBinary(BinaryOp::kMul, x, x, span);
        return call;
      }
      default:
        return call;
    }
  }
};

}  // namespace

Pass LowerIntrin() {
  return CreatePrimFuncBodyPass(
      [](const PrimFunc& func, PassContext&) {
        IntrinsicLowerer lowerer;
        return lowerer.VisitStmt(func->body);
      },
      PassInfo{"LowerIntrin", 0, {}, PassStage::kLoop});
}

}  // namespace kiln::loop::transform
