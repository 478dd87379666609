// FunctionEmitter, expressions: loop-IR PrimExprs to LLVM values with the interpreter's
// semantics (engine/loop/interpreter_values.h is the reference this file matches).
#include <algorithm>

#include "absl/strings/str_cat.h"
#include "engine/codegen/llvm/function_emitter.h"
#include "engine/codegen/llvm/inline_erf.h"
#include "engine/codegen/llvm/inline_exp.h"
#include "engine/codegen/llvm/vector_math.h"
#include "engine/ir/float16.h"
#include "engine/loop/arith/expr_deep_equal.h"
#include "engine/support/check.h"
#include "llvm/IR/Intrinsics.h"

namespace kiln::codegen {
namespace {

using loop::BinaryOp;
using loop::Intrinsic;

int Lanes(llvm::Type* type) {
  if (auto* vector = llvm::dyn_cast<llvm::FixedVectorType>(type)) return vector->getNumElements();
  return 1;
}

// True when `expr` reads a buffer (so it must not be evaluated for lanes nobody takes).
bool ReadsMemory(const loop::PrimExpr& expr) {
  if (expr.as<loop::BufferLoadNode>() != nullptr) return true;
  if (const auto* op = expr.as<loop::BinaryNode>()) return ReadsMemory(op->a) || ReadsMemory(op->b);
  if (const auto* op = expr.as<loop::NotNode>()) return ReadsMemory(op->a);
  if (const auto* op = expr.as<loop::CastNode>()) return ReadsMemory(op->value);
  if (const auto* op = expr.as<loop::SelectNode>()) {
    return ReadsMemory(op->cond) || ReadsMemory(op->true_value) || ReadsMemory(op->false_value);
  }
  if (const auto* op = expr.as<loop::IntrinsicCallNode>()) {
    for (const loop::PrimExpr& arg : op->args) {
      if (ReadsMemory(arg)) return true;
    }
    return false;
  }
  if (const auto* op = expr.as<loop::RampNode>()) return ReadsMemory(op->base) || ReadsMemory(op->stride);
  if (const auto* op = expr.as<loop::BroadcastNode>()) return ReadsMemory(op->value);
  return false;
}

}  // namespace

llvm::Value* FunctionEmitter::Splat(llvm::Value* scalar, int lanes) {
  if (lanes <= 1 || scalar->getType()->isVectorTy()) return scalar;
  return b_.CreateVectorSplat(lanes, scalar);
}

llvm::Value* FunctionEmitter::AllLanes(llvm::Value* mask_or_null, int lanes) {
  if (mask_or_null != nullptr) return Splat(mask_or_null, lanes);
  return Splat(b_.getTrue(), lanes);
}

llvm::Value* FunctionEmitter::EmitExpr(const loop::PrimExpr& expr) {
  const loop::PrimType& type = expr->type;
  switch (expr->kind()) {
    case ObjectKind::kIntImm: {
      const auto* op = expr.as<loop::IntImmNode>();
      return llvm::ConstantInt::get(module_.ComputeType(type.dtype, type.lanes),
                                    static_cast<uint64_t>(op->value), IsSignedInt(type.dtype));
    }
    case ObjectKind::kFloatImm: {
      double value = expr.as<loop::FloatImmNode>()->value;
      // A float16/bfloat16 immediate is the nearest value of its format (as the interpreter's).
      if (type.dtype == DataType::kFloat16) value = HalfToFloat(FloatToHalf(static_cast<float>(value)));
      if (type.dtype == DataType::kBFloat16) {
        value = BFloat16ToFloat(FloatToBFloat16(static_cast<float>(value)));
      }
      return llvm::ConstantFP::get(module_.ComputeType(type.dtype, type.lanes), value);
    }
    case ObjectKind::kStringImm: {
      llvm::Constant* text = b_.CreateGlobalString(expr.as<loop::StringImmNode>()->value, ".str");
      return llvm::ConstantExpr::getPtrToInt(text, b_.getInt64Ty());
    }
    case ObjectKind::kLoopVar: {
      auto it = vars_.find(expr.as<loop::VarNode>());
      KILN_CHECK(it != vars_.end()) << "unbound variable " << expr.as<loop::VarNode>()->name;
      return it->second;
    }
    case ObjectKind::kBinary: return EmitBinary(expr.as<loop::BinaryNode>());
    case ObjectKind::kNot: {
      llvm::Value* a = EmitExpr(expr.as<loop::NotNode>()->a);
      return b_.CreateNot(a);
    }
    case ObjectKind::kCast: return EmitCast(expr.as<loop::CastNode>());
    case ObjectKind::kSelect: return EmitSelect(expr.as<loop::SelectNode>());
    case ObjectKind::kIntrinsicCall: return EmitIntrinsic(expr.as<loop::IntrinsicCallNode>());
    case ObjectKind::kBufferLoad: return EmitLoad(expr.as<loop::BufferLoadNode>());
    case ObjectKind::kRamp: return EmitRamp(expr.as<loop::RampNode>());
    case ObjectKind::kBroadcast: {
      const auto* op = expr.as<loop::BroadcastNode>();
      return Splat(EmitExpr(op->value), op->lanes);
    }
    default: break;
  }
  KILN_UNREACHABLE() << "expression kind " << ObjectKindName(expr->kind());
  return nullptr;
}

llvm::Value* FunctionEmitter::EmitRamp(const loop::RampNode* op) {
  llvm::Value* base = Splat(EmitExpr(op->base), op->lanes);
  llvm::Value* stride = Splat(EmitExpr(op->stride), op->lanes);
  llvm::Type* element = base->getType()->getScalarType();
  std::vector<llvm::Constant*> steps;
  for (int i = 0; i < op->lanes; ++i) steps.push_back(llvm::ConstantInt::get(element, i));
  return b_.CreateAdd(base, b_.CreateMul(stride, llvm::ConstantVector::get(steps)));
}

llvm::Value* FunctionEmitter::EmitBranchy(llvm::Value* cond,
                                          const std::function<llvm::Value*()>& then_value,
                                          const std::function<llvm::Value*()>& else_value) {
  llvm::LLVMContext& context = module_.context();
  auto* then_block = llvm::BasicBlock::Create(context, "select.then", function_);
  auto* else_block = llvm::BasicBlock::Create(context, "select.else", function_);
  auto* merge_block = llvm::BasicBlock::Create(context, "select.end", function_);
  b_.CreateCondBr(cond, then_block, else_block);
  b_.SetInsertPoint(then_block);
  llvm::Value* t = then_value();
  llvm::BasicBlock* then_end = b_.GetInsertBlock();
  b_.CreateBr(merge_block);
  b_.SetInsertPoint(else_block);
  llvm::Value* f = else_value();
  llvm::BasicBlock* else_end = b_.GetInsertBlock();
  b_.CreateBr(merge_block);
  b_.SetInsertPoint(merge_block);
  llvm::PHINode* phi = b_.CreatePHI(t->getType(), 2);
  phi->addIncoming(t, then_end);
  phi->addIncoming(f, else_end);
  return phi;
}

llvm::Value* FunctionEmitter::EmitSelect(const loop::SelectNode* op) {
  bool guarded = ReadsMemory(op->true_value) || ReadsMemory(op->false_value);
  // A vector condition that is one scalar in every lane (a concatenation or channel shuffle
  // choosing its source per row) picks one side with a branch: masking the side not taken would
  // still issue its loads (a gather, in a channel shuffle's blocked source).
  if (const auto* broadcast = op->cond.as<loop::BroadcastNode>(); guarded && broadcast != nullptr) {
    return EmitBranchy(
        EmitExpr(broadcast->value), [&] { return EmitExpr(op->true_value); },
        [&] { return EmitExpr(op->false_value); });
  }
  llvm::Value* cond = EmitExpr(op->cond);
  if (!guarded) {
    llvm::Value* t = EmitExpr(op->true_value);
    llvm::Value* f = EmitExpr(op->false_value);
    return b_.CreateSelect(cond, t, f);
  }
  if (!cond->getType()->isVectorTy()) {
    return EmitBranchy(
        cond, [&] { return EmitExpr(op->true_value); }, [&] { return EmitExpr(op->false_value); });
  }
  // Vector condition: each side's loads are masked to the lanes that take it.
  llvm::Value* outer = mask_;
  mask_ = outer != nullptr ? b_.CreateAnd(outer, cond) : cond;
  llvm::Value* t = EmitExpr(op->true_value);
  llvm::Value* not_cond = b_.CreateNot(cond);
  mask_ = outer != nullptr ? b_.CreateAnd(outer, not_cond) : not_cond;
  llvm::Value* f = EmitExpr(op->false_value);
  mask_ = outer;
  return b_.CreateSelect(cond, t, f);
}

llvm::Value* FunctionEmitter::EmitLazyLogic(const loop::BinaryNode* op) {
  bool is_and = op->op == BinaryOp::kAnd;
  llvm::Value* a = EmitExpr(op->a);
  if (!ReadsMemory(op->b)) {
    llvm::Value* b = Splat(EmitExpr(op->b), Lanes(a->getType()));
    a = Splat(a, Lanes(b->getType()));
    return is_and ? b_.CreateAnd(a, b) : b_.CreateOr(a, b);
  }
  if (!a->getType()->isVectorTy()) {
    // b's lanes (if a vector) all depend on the scalar a.
    llvm::Type* result_type = module_.ComputeType(DataType::kBool, op->type.lanes);
    std::function<llvm::Value*()> short_value = [&]() -> llvm::Value* {
      return llvm::ConstantInt::get(result_type, is_and ? 0 : 1, false);
    };
    std::function<llvm::Value*()> long_value = [&] { return Splat(EmitExpr(op->b), op->type.lanes); };
    return is_and ? EmitBranchy(a, long_value, short_value) : EmitBranchy(a, short_value, long_value);
  }
  llvm::Value* outer = mask_;
  llvm::Value* lanes_needing_b = is_and ? a : b_.CreateNot(a);
  mask_ = outer != nullptr ? b_.CreateAnd(outer, lanes_needing_b) : lanes_needing_b;
  llvm::Value* b = Splat(EmitExpr(op->b), Lanes(a->getType()));
  mask_ = outer;
  return is_and ? b_.CreateAnd(a, b) : b_.CreateOr(a, b);
}

llvm::Value* FunctionEmitter::EmitBinary(const loop::BinaryNode* op) {
  if ((op->op == BinaryOp::kAnd || op->op == BinaryOp::kOr) &&
      op->a->type.dtype == DataType::kBool) {
    return EmitLazyLogic(op);
  }
  DataType dtype = op->a->type.dtype;
  // a * b + c in float32/float64: one fmuladd (LLVM fuses it where the target has FMA).
  if (op->op == BinaryOp::kAdd && (dtype == DataType::kFloat32 || dtype == DataType::kFloat64)) {
    const loop::BinaryNode* mul = op->a.as<loop::BinaryNode>();
    loop::PrimExpr addend = op->b;
    if (mul == nullptr || mul->op != BinaryOp::kMul) {
      mul = op->b.as<loop::BinaryNode>();
      addend = op->a;
    }
    if (mul != nullptr && mul->op == BinaryOp::kMul) {
      int lanes = op->type.lanes;
      llvm::Value* x = Splat(EmitExpr(mul->a), lanes);
      llvm::Value* y = Splat(EmitExpr(mul->b), lanes);
      llvm::Value* z = Splat(EmitExpr(addend), lanes);
      return b_.CreateIntrinsic(llvm::Intrinsic::fmuladd, {x->getType()}, {x, y, z});
    }
  }
  // y * sigmoid(y) in float32 (swish, SiLU): y / (1 + exp(-y)), one division and no multiply.
  if (op->op == BinaryOp::kMul && dtype == DataType::kFloat32) {
    for (const auto& [factor, other] : {std::pair{op->a, op->b}, std::pair{op->b, op->a}}) {
      const auto* call = other.as<loop::IntrinsicCallNode>();
      if (call == nullptr || call->intrinsic != Intrinsic::kSigmoid ||
          !loop::arith::ExprDeepEqual(call->args[0], factor)) {
        continue;
      }
      llvm::Value* y = Splat(EmitExpr(factor), op->type.lanes);
      return EmitInlineSigmoidFloat(b_, y, y, module_.vector_math.avx512);
    }
  }
  llvm::Value* a = EmitExpr(op->a);
  llvm::Value* b = EmitExpr(op->b);
  int lanes = std::max(Lanes(a->getType()), Lanes(b->getType()));
  a = Splat(a, lanes);
  b = Splat(b, lanes);
  if (IsFloat(dtype)) return EmitFloatBinary(op->op, dtype, a, b);
  return EmitIntBinary(op->op, dtype, a, b, op->b);
}

llvm::Value* FunctionEmitter::EmitFloatBinary(BinaryOp op, DataType dtype, llvm::Value* a,
                                              llvm::Value* b) {
  llvm::Value* result = nullptr;
  switch (op) {
    case BinaryOp::kAdd: result = b_.CreateFAdd(a, b); break;
    case BinaryOp::kSub: result = b_.CreateFSub(a, b); break;
    case BinaryOp::kMul: result = b_.CreateFMul(a, b); break;
    case BinaryOp::kDiv: result = b_.CreateFDiv(a, b); break;
    case BinaryOp::kFloorDiv:
      result = b_.CreateUnaryIntrinsic(llvm::Intrinsic::floor, b_.CreateFDiv(a, b));
      break;
    case BinaryOp::kFloorMod: {
      // fmod, moved into the divisor's sign.
      llvm::Value* r = b_.CreateFRem(a, b);
      llvm::Value* zero = llvm::ConstantFP::get(a->getType(), 0.0);
      llvm::Value* signs_differ =
          b_.CreateXor(b_.CreateFCmpOLT(r, zero), b_.CreateFCmpOLT(b, zero));
      llvm::Value* adjust = b_.CreateAnd(b_.CreateFCmpUNE(r, zero), signs_differ);
      result = b_.CreateSelect(adjust, b_.CreateFAdd(r, b), r);
      break;
    }
    // The interpreter's min and max: NaN from either side, else the smaller (larger) value, `a`
    // on a tie. Written as a compare-select, which x86 and AArch64 match to one min/max
    // instruction, then a NaN blend for `b`: llvm.minimum/maximum also order -0 below +0, which
    // costs three more instructions per vector on every ReLU, clip and max pool step.
    case BinaryOp::kMin:
      result = b_.CreateSelect(b_.CreateFCmpUNO(b, b), b,
                               b_.CreateSelect(b_.CreateFCmpOLT(b, a), b, a));
      break;
    case BinaryOp::kMax:
      result = b_.CreateSelect(b_.CreateFCmpUNO(b, b), b,
                               b_.CreateSelect(b_.CreateFCmpOLT(a, b), b, a));
      break;
    case BinaryOp::kEQ: return b_.CreateFCmpOEQ(a, b);
    case BinaryOp::kNE: return b_.CreateFCmpUNE(a, b);
    case BinaryOp::kLT: return b_.CreateFCmpOLT(a, b);
    case BinaryOp::kLE: return b_.CreateFCmpOLE(a, b);
    case BinaryOp::kGT: return b_.CreateFCmpOGT(a, b);
    case BinaryOp::kGE: return b_.CreateFCmpOGE(a, b);
    default: KILN_UNREACHABLE() << "float " << loop::BinaryOpName(op);
  }
  return RoundToFormat(result, dtype);
}

llvm::Value* FunctionEmitter::EmitIntBinary(BinaryOp op, DataType dtype, llvm::Value* a,
                                            llvm::Value* b, const loop::PrimExpr& divisor) {
  bool is_signed = IsSignedInt(dtype);
  llvm::Type* type = a->getType();
  switch (op) {
    case BinaryOp::kAdd: return b_.CreateAdd(a, b);
    case BinaryOp::kSub: return b_.CreateSub(a, b);
    case BinaryOp::kMul: return b_.CreateMul(a, b);
    case BinaryOp::kMin:
      return b_.CreateBinaryIntrinsic(is_signed ? llvm::Intrinsic::smin : llvm::Intrinsic::umin, a, b);
    case BinaryOp::kMax:
      return b_.CreateBinaryIntrinsic(is_signed ? llvm::Intrinsic::smax : llvm::Intrinsic::umax, a, b);
    case BinaryOp::kEQ: return b_.CreateICmpEQ(a, b);
    case BinaryOp::kNE: return b_.CreateICmpNE(a, b);
    case BinaryOp::kLT: return is_signed ? b_.CreateICmpSLT(a, b) : b_.CreateICmpULT(a, b);
    case BinaryOp::kLE: return is_signed ? b_.CreateICmpSLE(a, b) : b_.CreateICmpULE(a, b);
    case BinaryOp::kGT: return is_signed ? b_.CreateICmpSGT(a, b) : b_.CreateICmpUGT(a, b);
    case BinaryOp::kGE: return is_signed ? b_.CreateICmpSGE(a, b) : b_.CreateICmpUGE(a, b);
    case BinaryOp::kAnd:
    case BinaryOp::kBitAnd: return b_.CreateAnd(a, b);
    case BinaryOp::kOr:
    case BinaryOp::kBitOr: return b_.CreateOr(a, b);
    case BinaryOp::kBitXor: return b_.CreateXor(a, b);
    case BinaryOp::kShiftLeft:
    case BinaryOp::kShiftRight: {
      // An amount outside [0, bits) (an error in the interpreter) gives 0 rather than poison.
      unsigned bits = type->getScalarSizeInBits();
      llvm::Value* in_range = b_.CreateICmpULT(b, llvm::ConstantInt::get(type, bits));
      llvm::Value* amount = b_.CreateAnd(b, llvm::ConstantInt::get(type, bits - 1));
      llvm::Value* shifted = op == BinaryOp::kShiftLeft ? b_.CreateShl(a, amount)
                             : is_signed               ? b_.CreateAShr(a, amount)
                                                       : b_.CreateLShr(a, amount);
      return b_.CreateSelect(in_range, shifted, llvm::Constant::getNullValue(type));
    }
    case BinaryOp::kDiv:
    case BinaryOp::kFloorDiv:
    case BinaryOp::kFloorMod: break;
    default: KILN_UNREACHABLE() << "integer " << loop::BinaryOpName(op);
  }
  // Division. The divisor is made safe unless it is a known constant other than 0 and -1:
  // division by zero (an interpreter error) gives 0, and INT_MIN / -1 wraps (x86 would trap).
  int64_t constant = 0;
  bool safe_constant = loop::AsConstInt(divisor, &constant) && constant != 0 &&
                       (!is_signed || constant != -1);
  llvm::Value* zero = llvm::Constant::getNullValue(type);
  llvm::Value* one = llvm::ConstantInt::get(type, 1);
  llvm::Value* is_zero = nullptr;
  llvm::Value* is_minus_one = nullptr;
  if (!safe_constant) {
    is_zero = b_.CreateICmpEQ(b, zero);
    llvm::Value* unusable = is_zero;
    if (is_signed) {
      is_minus_one = b_.CreateICmpEQ(b, llvm::Constant::getAllOnesValue(type));
      unusable = b_.CreateOr(is_zero, is_minus_one);
    }
    b = b_.CreateSelect(unusable, one, b);
  }
  llvm::Value* q = is_signed ? b_.CreateSDiv(a, b) : b_.CreateUDiv(a, b);
  llvm::Value* r = is_signed ? b_.CreateSRem(a, b) : b_.CreateURem(a, b);
  llvm::Value* result = nullptr;
  if (op == BinaryOp::kDiv || !is_signed) {
    result = op == BinaryOp::kFloorMod ? r : q;
  } else {
    // Floor: when the remainder is nonzero and its sign differs from the divisor's.
    llvm::Value* adjust =
        b_.CreateAnd(b_.CreateICmpNE(r, zero), b_.CreateICmpSLT(b_.CreateXor(r, b), zero));
    result = op == BinaryOp::kFloorDiv ? b_.CreateSub(q, b_.CreateZExt(adjust, type))
                                       : b_.CreateAdd(r, b_.CreateSelect(adjust, b, zero));
  }
  if (is_minus_one != nullptr) {
    llvm::Value* wrapped = op == BinaryOp::kFloorMod ? zero : b_.CreateSub(zero, a);
    result = b_.CreateSelect(is_minus_one, wrapped, result);
  }
  if (is_zero != nullptr) result = b_.CreateSelect(is_zero, zero, result);
  return result;
}

llvm::Value* FunctionEmitter::DoubleToFloatRoundToOdd(llvm::Value* value) {
  llvm::Type* float_type = value->getType()->isVectorTy()
                               ? module_.ComputeType(DataType::kFloat32, Lanes(value->getType()))
                               : module_.ComputeType(DataType::kFloat32);
  llvm::Type* bits_type = module_.ComputeType(DataType::kInt32, Lanes(value->getType()));
  llvm::Value* f = b_.CreateFPTrunc(value, float_type);
  llvm::Value* back = b_.CreateFPExt(f, value->getType());
  llvm::Value* exact = b_.CreateFCmpOEQ(back, value);
  llvm::Value* is_nan = b_.CreateFCmpUNO(value, value);
  llvm::Value* f_abs = b_.CreateUnaryIntrinsic(llvm::Intrinsic::fabs, f);
  llvm::Value* is_inf = b_.CreateFCmpOEQ(f_abs, llvm::ConstantFP::getInfinity(float_type));
  llvm::Value* bits = b_.CreateBitCast(f, bits_type);
  llvm::Value* overshot = b_.CreateFCmpOGT(b_.CreateUnaryIntrinsic(llvm::Intrinsic::fabs, back),
                                           b_.CreateUnaryIntrinsic(llvm::Intrinsic::fabs, value));
  bits = b_.CreateSelect(overshot, b_.CreateSub(bits, llvm::ConstantInt::get(bits_type, 1)), bits);
  bits = b_.CreateOr(bits, llvm::ConstantInt::get(bits_type, 1));
  llvm::Value* odd = b_.CreateBitCast(bits, float_type);
  llvm::Value* keep = b_.CreateOr(exact, b_.CreateOr(is_nan, is_inf));
  return b_.CreateSelect(keep, f, odd);
}

llvm::Value* FunctionEmitter::RoundToFormat(llvm::Value* value, DataType dtype) {
  int lanes = Lanes(value->getType());
  if (dtype == DataType::kFloat16) {
    return b_.CreateFPExt(b_.CreateFPTrunc(value, module_.StorageType(dtype, lanes)),
                          value->getType());
  }
  if (dtype == DataType::kBFloat16) {
    return FromStorage(ToStorage(value, dtype), dtype);
  }
  return value;
}

llvm::Value* FunctionEmitter::FromStorage(llvm::Value* stored, DataType dtype) {
  int lanes = Lanes(stored->getType());
  switch (dtype) {
    case DataType::kFloat16: return b_.CreateFPExt(stored, module_.ComputeType(dtype, lanes));
    case DataType::kBFloat16: {
      llvm::Type* i32 = module_.ComputeType(DataType::kInt32, lanes);
      llvm::Value* bits = b_.CreateShl(b_.CreateZExt(stored, i32), 16);
      return b_.CreateBitCast(bits, module_.ComputeType(dtype, lanes));
    }
    case DataType::kBool:
      return b_.CreateICmpNE(stored, llvm::Constant::getNullValue(stored->getType()));
    default: return stored;
  }
}

llvm::Value* FunctionEmitter::ToStorage(llvm::Value* value, DataType dtype) {
  int lanes = Lanes(value->getType());
  switch (dtype) {
    case DataType::kFloat16: return b_.CreateFPTrunc(value, module_.StorageType(dtype, lanes));
    case DataType::kBFloat16: {
      // Round to nearest even; NaN stays a (quiet) NaN. As FloatToBFloat16 in engine/ir/float16.
      llvm::Type* i32 = module_.ComputeType(DataType::kInt32, lanes);
      llvm::Value* bits = b_.CreateBitCast(value, i32);
      llvm::Value* high = b_.CreateLShr(bits, 16);
      llvm::Value* rounding = b_.CreateAdd(llvm::ConstantInt::get(i32, 0x7fff),
                                           b_.CreateAnd(high, llvm::ConstantInt::get(i32, 1)));
      llvm::Value* rounded = b_.CreateLShr(b_.CreateAdd(bits, rounding), 16);
      llvm::Value* quiet = b_.CreateOr(high, llvm::ConstantInt::get(i32, 0x40));
      llvm::Value* result = b_.CreateSelect(b_.CreateFCmpUNO(value, value), quiet, rounded);
      return b_.CreateTrunc(result, module_.StorageType(dtype, lanes));
    }
    case DataType::kBool: return b_.CreateZExt(value, module_.StorageType(dtype, lanes));
    default: return value;
  }
}

llvm::Value* FunctionEmitter::EmitCast(const loop::CastNode* op) {
  DataType from = op->value->type.dtype;
  DataType to = op->type.dtype;
  llvm::Value* value = EmitExpr(op->value);
  int lanes = Lanes(value->getType());
  llvm::Type* target = module_.ComputeType(to, lanes);
  if (from == to) return value;
  if (from == DataType::kString || to == DataType::kString) return EmitStringCast(from, to, value);
  if (to == DataType::kBool) {
    llvm::Value* zero = llvm::Constant::getNullValue(value->getType());
    return IsFloat(from) ? b_.CreateFCmpUNE(value, zero) : b_.CreateICmpNE(value, zero);
  }
  if (from == DataType::kBool) {
    return IsFloat(to) ? b_.CreateUIToFP(value, target) : b_.CreateZExt(value, target);
  }
  bool from_float = IsFloat(from), to_float = IsFloat(to);
  if (!from_float && !to_float) {
    return IsSignedInt(from) ? b_.CreateSExtOrTrunc(value, target) : b_.CreateZExtOrTrunc(value, target);
  }
  if (from_float && !to_float) {
    // Truncation toward zero, saturating; NaN gives 0.
    auto id = IsSignedInt(to) ? llvm::Intrinsic::fptosi_sat : llvm::Intrinsic::fptoui_sat;
    return b_.CreateIntrinsic(id, {target, value->getType()}, {value});
  }
  bool narrow_to = to == DataType::kFloat16 || to == DataType::kBFloat16;
  if (!from_float) {
    // Integer to float: exactly one rounding (through double and round-to-odd for the narrow
    // formats).
    if (!narrow_to) return IsSignedInt(from) ? b_.CreateSIToFP(value, target) : b_.CreateUIToFP(value, target);
    llvm::Type* f64 = module_.ComputeType(DataType::kFloat64, lanes);
    llvm::Value* wide = IsSignedInt(from) ? b_.CreateSIToFP(value, f64) : b_.CreateUIToFP(value, f64);
    return RoundToFormat(DoubleToFloatRoundToOdd(wide), to);
  }
  // Float to float. float16/bfloat16/float32 share the float compute type.
  if (from == DataType::kFloat64) {
    if (to == DataType::kFloat32) return b_.CreateFPTrunc(value, target);
    return RoundToFormat(DoubleToFloatRoundToOdd(value), to);
  }
  if (to == DataType::kFloat64) return b_.CreateFPExt(value, target);
  return RoundToFormat(value, to);
}

llvm::Value* FunctionEmitter::CallPerLane(llvm::FunctionCallee callee, llvm::Type* result,
                                          const std::vector<llvm::Value*>& args) {
  int lanes = Lanes(args[0]->getType());
  if (lanes == 1) return b_.CreateCall(callee, args);
  llvm::Value* out = llvm::PoisonValue::get(llvm::FixedVectorType::get(result, lanes));
  for (int lane = 0; lane < lanes; ++lane) {
    std::vector<llvm::Value*> lane_args;
    for (llvm::Value* arg : args) lane_args.push_back(b_.CreateExtractElement(arg, lane));
    out = b_.CreateInsertElement(out, b_.CreateCall(callee, lane_args), lane);
  }
  return out;
}

// String words are i64 in registers; libkiln_rt takes and returns them as pointers, which the
// C ABIs Kiln targets pass in the same integer registers (declared as i64 here).
llvm::Value* FunctionEmitter::EmitStringCast(DataType from, DataType to, llvm::Value* value) {
  llvm::Type* i64 = b_.getInt64Ty();
  const DataType number = to == DataType::kString ? from : to;
  KILN_CHECK(number != DataType::kFloat16 && number != DataType::kBFloat16 &&
             number != DataType::kBool && number != DataType::kString)
      << "cast between string and " << DataTypeName(number);
  const char* suffix = number == DataType::kFloat32   ? "f32"
                       : number == DataType::kFloat64 ? "f64"
                       : IsSignedInt(number)          ? "i64"
                                                      : "u64";
  llvm::Type* wide = number == DataType::kFloat32   ? b_.getFloatTy()
                     : number == DataType::kFloat64 ? b_.getDoubleTy()
                                                    : i64;
  int lanes = Lanes(value->getType());
  if (to == DataType::kString) {
    if (!IsFloat(number)) {
      llvm::Type* target = module_.ComputeType(DataType::kInt64, lanes);
      value = IsSignedInt(number) ? b_.CreateSExtOrTrunc(value, target) : b_.CreateZExtOrTrunc(value, target);
    }
    return CallPerLane(
        module_.RuntimeFunction(absl::StrCat("kiln_rt_string_from_", suffix), i64, {wide}), i64,
        {value});
  }
  llvm::Value* result = CallPerLane(
      module_.RuntimeFunction(absl::StrCat("kiln_rt_string_to_", suffix), wide, {i64}), wide,
      {value});
  if (IsFloat(number)) return result;
  // Integers narrower than 64 bits wrap, as the interpreter's Wrap does.
  return b_.CreateTrunc(result, module_.ComputeType(number, lanes));
}

llvm::Value* FunctionEmitter::EmitStringIntrinsic(Intrinsic intrinsic,
                                                  const std::vector<llvm::Value*>& args) {
  llvm::Type* i64 = b_.getInt64Ty();
  switch (intrinsic) {
    case Intrinsic::kStringUpper:
      return CallPerLane(module_.RuntimeFunction("kiln_rt_string_upper", i64, {i64}), i64, args);
    case Intrinsic::kStringLower:
      return CallPerLane(module_.RuntimeFunction("kiln_rt_string_lower", i64, {i64}), i64, args);
    default: {
      llvm::Type* i32 = b_.getInt32Ty();
      llvm::Value* equal = CallPerLane(
          module_.RuntimeFunction("kiln_rt_string_equal", i32, {i64, i64}), i32, args);
      return b_.CreateICmpNE(equal, llvm::Constant::getNullValue(equal->getType()));
    }
  }
}

llvm::Value* FunctionEmitter::EmitFloatMath(Intrinsic intrinsic, DataType dtype,
                                            const std::vector<llvm::Value*>& args) {
  llvm::Value* x = args[0];
  llvm::Type* type = x->getType();
  auto unary = [&](llvm::Intrinsic::ID id) { return b_.CreateUnaryIntrinsic(id, x); };
  // A C math function, called per lane for vectors.
  auto libm = [&](const char* name) -> llvm::Value* {
    llvm::Type* scalar = type->getScalarType();
    std::string symbol = scalar->isFloatTy() ? std::string(name) + "f" : std::string(name);
    llvm::FunctionCallee callee = module_.MathFunction(symbol, scalar, static_cast<int>(args.size()));
    int lanes = Lanes(type);
    if (lanes == 1) return b_.CreateCall(callee, args);
    llvm::Value* result = llvm::PoisonValue::get(type);
    for (int lane = 0; lane < lanes; ++lane) {
      std::vector<llvm::Value*> lane_args;
      for (llvm::Value* arg : args) lane_args.push_back(b_.CreateExtractElement(arg, lane));
      result = b_.CreateInsertElement(result, b_.CreateCall(callee, lane_args), lane);
    }
    return result;
  };
  // A vector through libmvec when the target has it (vector_math.h), else `scalar`.
  auto vector_or = [&](const char* name, const std::vector<llvm::Value*>& operands,
                       auto scalar) -> llvm::Value* {
    if (Lanes(type) > 1) {
      if (llvm::Value* v = EmitVectorMathCall(b_, module_.module, module_.vector_math, name, operands)) {
        return v;
      }
    }
    return scalar();
  };
  auto math = [&](const char* name, llvm::Intrinsic::ID id) {
    return vector_or(name, args, [&] { return unary(id); });
  };
  auto c_math = [&](const char* name) { return vector_or(name, args, [&] { return libm(name); }); };
  llvm::Value* one = llvm::ConstantFP::get(type, 1.0);
  // float32 exp is inlined (inline_exp.h); double keeps libmvec and libm.
  auto exp = [&](llvm::Value* v) -> llvm::Value* {
    if (type->getScalarType()->isFloatTy()) return EmitInlineExpFloat(b_, v, module_.vector_math.avx512);
    return vector_or("exp", {v}, [&] { return b_.CreateUnaryIntrinsic(llvm::Intrinsic::exp, v); });
  };
  switch (intrinsic) {
    case Intrinsic::kExp: return exp(x);
    case Intrinsic::kLog: return math("log", llvm::Intrinsic::log);
    case Intrinsic::kSqrt: return unary(llvm::Intrinsic::sqrt);
    case Intrinsic::kRsqrt: return b_.CreateFDiv(one, unary(llvm::Intrinsic::sqrt));
    case Intrinsic::kSigmoid: {
      if (type->getScalarType()->isFloatTy()) {
        return EmitInlineSigmoidFloat(b_, x, nullptr, module_.vector_math.avx512);
      }
      // e / (1 + e) for x < 0 and 1 / (1 + e) otherwise, with e = exp(-|x|) <= 1: no overflow,
      // and the divisor lies in [1, 2]. A NaN stays NaN.
      llvm::Value* e = exp(b_.CreateFNeg(unary(llvm::Intrinsic::fabs)));
      llvm::Value* numerator =
          b_.CreateSelect(b_.CreateFCmpOLT(x, llvm::ConstantFP::get(type, 0.0)), e, one);
      return b_.CreateFDiv(numerator, b_.CreateFAdd(one, e));
    }
    case Intrinsic::kAbs: return unary(llvm::Intrinsic::fabs);
    case Intrinsic::kFloor: return unary(llvm::Intrinsic::floor);
    case Intrinsic::kCeil: return unary(llvm::Intrinsic::ceil);
    case Intrinsic::kRound: return unary(llvm::Intrinsic::roundeven);
    case Intrinsic::kTrunc: return unary(llvm::Intrinsic::trunc);
    case Intrinsic::kSin: return math("sin", llvm::Intrinsic::sin);
    case Intrinsic::kCos: return math("cos", llvm::Intrinsic::cos);
    case Intrinsic::kPow:
      return vector_or("pow", args,
                       [&] { return b_.CreateBinaryIntrinsic(llvm::Intrinsic::pow, x, args[1]); });
    case Intrinsic::kFma:
      return b_.CreateIntrinsic(llvm::Intrinsic::fma, {type}, {x, args[1], args[2]});
    case Intrinsic::kFmod: return b_.CreateFRem(x, args[1]);
    case Intrinsic::kIsNan: return b_.CreateFCmpUNO(x, x);
    case Intrinsic::kIsInf:
      return b_.CreateFCmpOEQ(unary(llvm::Intrinsic::fabs), llvm::ConstantFP::getInfinity(type));
    case Intrinsic::kTanh: return c_math("tanh");
    case Intrinsic::kErf:
      if (type->getScalarType()->isFloatTy()) return EmitInlineErfFloat(b_, x);
      return c_math("erf");
    case Intrinsic::kTan: return c_math("tan");
    case Intrinsic::kAsin: return c_math("asin");
    case Intrinsic::kAcos: return c_math("acos");
    case Intrinsic::kAtan: return c_math("atan");
    case Intrinsic::kSinh: return c_math("sinh");
    case Intrinsic::kCosh: return c_math("cosh");
    case Intrinsic::kAsinh: return c_math("asinh");
    case Intrinsic::kAcosh: return c_math("acosh");
    case Intrinsic::kAtanh: return c_math("atanh");
    case Intrinsic::kStringUpper:
    case Intrinsic::kStringLower:
    case Intrinsic::kStringEqual: break;  // EmitStringIntrinsic's
  }
  KILN_UNREACHABLE() << "intrinsic " << loop::IntrinsicName(intrinsic);
  (void)dtype;
  return nullptr;
}

llvm::Value* FunctionEmitter::EmitIntrinsic(const loop::IntrinsicCallNode* op) {
  int lanes = op->type.lanes;
  std::vector<llvm::Value*> args;
  for (const loop::PrimExpr& arg : op->args) args.push_back(Splat(EmitExpr(arg), lanes));
  DataType dtype = op->args[0]->type.dtype;
  if (loop::IsStringIntrinsic(op->intrinsic)) return EmitStringIntrinsic(op->intrinsic, args);
  bool predicate = op->intrinsic == Intrinsic::kIsNan || op->intrinsic == Intrinsic::kIsInf;
  if (IsFloat(dtype) && op->intrinsic == Intrinsic::kFma && DataTypeBytes(dtype) == 2) {
    // float16/bfloat16: the exact product in double, then one rounding to the format.
    llvm::Type* f64 = module_.ComputeType(DataType::kFloat64, lanes);
    std::vector<llvm::Value*> wide;
    for (llvm::Value* arg : args) wide.push_back(b_.CreateFPExt(arg, f64));
    llvm::Value* fused = b_.CreateIntrinsic(llvm::Intrinsic::fma, {f64}, wide);
    return RoundToFormat(DoubleToFloatRoundToOdd(fused), dtype);
  }
  if (IsFloat(dtype)) {
    llvm::Value* result = EmitFloatMath(op->intrinsic, dtype, args);
    return predicate ? result : RoundToFormat(result, dtype);
  }
  // Integers (interpreter_values.h): abs wraps, rounding is the identity, isnan/isinf are
  // false, pow is exact, fma is a * b + c; the other functions are computed in double and cast
  // back saturating.
  llvm::Value* x = args[0];
  llvm::Type* type = x->getType();
  bool is_signed = IsSignedInt(dtype);
  switch (op->intrinsic) {
    case Intrinsic::kAbs:
      return is_signed ? b_.CreateBinaryIntrinsic(llvm::Intrinsic::abs, x, b_.getFalse()) : x;
    case Intrinsic::kFloor:
    case Intrinsic::kCeil:
    case Intrinsic::kRound:
    case Intrinsic::kTrunc: return x;
    case Intrinsic::kIsNan:
    case Intrinsic::kIsInf: return llvm::Constant::getNullValue(module_.ComputeType(DataType::kBool, lanes));
    case Intrinsic::kFma: return b_.CreateAdd(b_.CreateMul(x, args[1]), args[2]);
    case Intrinsic::kPow: {
      llvm::Type* i64 = b_.getInt64Ty();
      auto widen = [&](llvm::Value* v) {
        return is_signed ? b_.CreateSExtOrTrunc(v, i64) : b_.CreateZExtOrTrunc(v, i64);
      };
      auto one_lane = [&](llvm::Value* base, llvm::Value* exponent) {
        return b_.CreateTrunc(b_.CreateCall(module_.IntPow(), {widen(base), widen(exponent)}),
                              type->getScalarType());
      };
      if (lanes == 1) return one_lane(x, args[1]);
      llvm::Value* result = llvm::PoisonValue::get(type);
      for (int lane = 0; lane < lanes; ++lane) {
        result = b_.CreateInsertElement(
            result,
            one_lane(b_.CreateExtractElement(x, lane), b_.CreateExtractElement(args[1], lane)),
            lane);
      }
      return result;
    }
    case Intrinsic::kFmod: {
      // Truncating remainder: x - trunc(x / y) * y (a zero divisor gives x).
      llvm::Value* quotient = EmitIntBinary(BinaryOp::kDiv, dtype, x, args[1], op->args[1]);
      return b_.CreateSub(x, b_.CreateMul(quotient, args[1]));
    }
    default: break;
  }
  llvm::Type* f64 = module_.ComputeType(DataType::kFloat64, lanes);
  std::vector<llvm::Value*> wide;
  for (llvm::Value* arg : args) {
    wide.push_back(is_signed ? b_.CreateSIToFP(arg, f64) : b_.CreateUIToFP(arg, f64));
  }
  llvm::Value* result = EmitFloatMath(op->intrinsic, DataType::kFloat64, wide);
  auto id = is_signed ? llvm::Intrinsic::fptosi_sat : llvm::Intrinsic::fptoui_sat;
  return b_.CreateIntrinsic(id, {type, f64}, {result});
}

}  // namespace kiln::codegen
