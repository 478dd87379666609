// The interpreter's expression nodes and their compilation: one node class
// per expression kind, specialized per dtype (and per operator for binary
// arithmetic) so evaluating a node is one virtual call and straight-line code.
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "engine/loop/buffer.h"
#include "engine/loop/interpreter_compiler.h"
#include "engine/runtime/kiln_runtime.h"
#include "engine/support/status_macros.h"

namespace kiln::loop::interp {

// ---------------------------------------------------------------------------
// Messages.

namespace {

const char* BinarySymbol(BinaryOp op) {
  switch (op) {
    case BinaryOp::kAdd: return "+";
    case BinaryOp::kSub: return "-";
    case BinaryOp::kMul: return "*";
    case BinaryOp::kDiv: return "/";
    case BinaryOp::kEQ: return "==";
    case BinaryOp::kNE: return "!=";
    case BinaryOp::kLT: return "<";
    case BinaryOp::kLE: return "<=";
    case BinaryOp::kGT: return ">";
    case BinaryOp::kGE: return ">=";
    case BinaryOp::kAnd: return "&&";
    case BinaryOp::kOr: return "||";
    case BinaryOp::kBitAnd: return "&";
    case BinaryOp::kBitOr: return "|";
    case BinaryOp::kBitXor: return "^";
    case BinaryOp::kShiftLeft: return "<<";
    case BinaryOp::kShiftRight: return ">>";
    default: return nullptr;  // written as calls: floordiv(a, b)
  }
}

// Deep expressions are cut off: a message needs the shape, not every leaf.
void Describe(const PrimExprNode* expr, int depth, std::string* out) {
  if (depth > 6) {
    out->append("...");
    return;
  }
  auto sub = [&](const PrimExpr& e) { Describe(e.get(), depth + 1, out); };
  switch (expr->kind()) {
    case ObjectKind::kIntImm:
      absl::StrAppend(out, static_cast<const IntImmNode*>(expr)->value);
      return;
    case ObjectKind::kFloatImm:
      absl::StrAppend(out, static_cast<const FloatImmNode*>(expr)->value);
      return;
    case ObjectKind::kStringImm:
      absl::StrAppend(out, "\"", static_cast<const StringImmNode*>(expr)->value, "\"");
      return;
    case ObjectKind::kLoopVar:
      out->append(static_cast<const VarNode*>(expr)->name);
      return;
    case ObjectKind::kBinary: {
      const auto* op = static_cast<const BinaryNode*>(expr);
      if (const char* symbol = BinarySymbol(op->op)) {
        out->append("(");
        sub(op->a);
        absl::StrAppend(out, " ", symbol, " ");
        sub(op->b);
        out->append(")");
      } else {
        absl::StrAppend(out, BinaryOpName(op->op), "(");
        sub(op->a);
        out->append(", ");
        sub(op->b);
        out->append(")");
      }
      return;
    }
    case ObjectKind::kNot:
      out->append("!");
      sub(static_cast<const NotNode*>(expr)->a);
      return;
    case ObjectKind::kCast:
      absl::StrAppend(out, PrimTypeName(expr->type), "(");
      sub(static_cast<const CastNode*>(expr)->value);
      out->append(")");
      return;
    case ObjectKind::kSelect: {
      const auto* op = static_cast<const SelectNode*>(expr);
      out->append("select(");
      sub(op->cond);
      out->append(", ");
      sub(op->true_value);
      out->append(", ");
      sub(op->false_value);
      out->append(")");
      return;
    }
    case ObjectKind::kIntrinsicCall: {
      const auto* op = static_cast<const IntrinsicCallNode*>(expr);
      absl::StrAppend(out, IntrinsicName(op->intrinsic), "(");
      for (size_t i = 0; i < op->args.size(); ++i) {
        if (i > 0) out->append(", ");
        sub(op->args[i]);
      }
      out->append(")");
      return;
    }
    case ObjectKind::kBufferLoad: {
      const auto* op = static_cast<const BufferLoadNode*>(expr);
      absl::StrAppend(out, op->buffer->name, "[");
      for (size_t i = 0; i < op->indices.size(); ++i) {
        if (i > 0) out->append(", ");
        sub(op->indices[i]);
      }
      out->append("]");
      return;
    }
    case ObjectKind::kRamp: {
      const auto* op = static_cast<const RampNode*>(expr);
      out->append("ramp(");
      sub(op->base);
      out->append(", ");
      sub(op->stride);
      absl::StrAppend(out, ", ", op->lanes, ")");
      return;
    }
    case ObjectKind::kBroadcast: {
      const auto* op = static_cast<const BroadcastNode*>(expr);
      out->append("broadcast(");
      sub(op->value);
      absl::StrAppend(out, ", ", op->lanes, ")");
      return;
    }
    default:
      out->append("?");
      return;
  }
}

}  // namespace

std::string DescribeExpr(const PrimExprNode* expr) {
  std::string out;
  Describe(expr, 0, &out);
  return out;
}

std::string DescribeSpan(const Span& span) {
  std::vector<std::string> names = SpanSourceNames(span);
  if (names.empty()) return "";
  return absl::StrCat(" (from ", absl::StrJoin(names, ", "), ")");
}

void BufferAccess::ReportOutOfBounds(Frame& frame, const char* access_kind, int64_t elem_bytes,
                                     const Span& span) const {
  if (frame.state->failed()) return;  // an index expression failed first
  std::vector<std::string> index_values;
  for (const Operand& index : indices) {
    index_values.push_back(absl::StrCat(index.Eval(frame).i));
  }
  int64_t flat = 0;
  bool overflow = !Flat(frame, &flat);
  const StorageView& storage = frame.storages[storage_slot];
  std::string where = absl::StrCat(buffer->name, "[", absl::StrJoin(index_values, ", "), "]");
  if (lane >= 0) absl::StrAppend(&where, " (lane ", lane, ")");
  std::string position =
      overflow ? std::string("the element offset overflows int64")
               : absl::StrCat("element ", flat, " is outside storage '", buffer->data->name,
                              "' of ", storage.bytes / elem_bytes, " ",
                              DataTypeName(buffer->dtype), " elements");
  frame.state->Fail(absl::OutOfRangeError(absl::StrCat("out-of-bounds ", access_kind,
                                                       " buffer '", buffer->name, "' at ", where,
                                                       ": ", position, DescribeSpan(span))));
}

// ---------------------------------------------------------------------------
// Nodes.

namespace {

// Signed integer div, floordiv and floormod: one rule when the dividend is
// nonnegative and the divisor positive.
template <typename T>
constexpr bool IsSignedIntegerDivision(BinaryOp op) {
  return !T::kFloat && !T::kBool && T::kSigned &&
         (op == BinaryOp::kDiv || op == BinaryOp::kFloorDiv || op == BinaryOp::kFloorMod);
}

// Replaces each x[k] by x[k] / d (or x[k] % d when `remainder`) when every
// x[k] is in [0, 2^50]; false, changing nothing, otherwise. Integer division
// is the slowest instruction of index arithmetic (`fused // 27` in every
// folded weight); a double reciprocal estimates the quotient within one,
// which the remainder then corrects, so the result is exact and several
// times faster. Consecutive dividends (a fused loop index) need one division.
bool DivideByPositiveConstant(Scalar* x, int n, int64_t d, bool remainder) {
  constexpr int64_t kLimit = int64_t{1} << 50;
  if (n == 0) return true;
  const int64_t x0 = x[0].i;
  bool consecutive = true;  // the common case: a fused loop index
  for (int k = 1; k < n; ++k) consecutive &= x[k].i == x0 + k;
  if (consecutive && x0 >= 0 && x0 <= kLimit) {
    int64_t q = x0 / d;
    int64_t r = x0 % d;
    for (int k = 0; k < n; ++k) {
      x[k].i = remainder ? r : q;
      if (++r == d) {
        r = 0;
        ++q;
      }
    }
    return true;
  }
  bool in_range = true;
  for (int k = 0; k < n; ++k) in_range &= static_cast<uint64_t>(x[k].i) <= kLimit;
  if (!in_range) return false;
  const double reciprocal = 1.0 / static_cast<double>(d);
  for (int k = 0; k < n; ++k) {
    int64_t q = static_cast<int64_t>(static_cast<double>(x[k].i) * reciprocal);
    int64_t r = x[k].i - q * d;
    if (r < 0) {
      q -= 1;
      r += d;
    } else if (r >= d) {
      q += 1;
      r -= d;
    }
    x[k].i = remainder ? r : q;
  }
  return true;
}

template <typename T, BinaryOp kOp>
class BinaryExpr final : public CompiledExpr {
 public:
  BinaryExpr(const CompiledExpr* a, const CompiledExpr* b, const BinaryNode* ir)
      : a_(a), b_(b), ir_(ir) {}
  Scalar Eval(Frame& frame) const override {
    Scalar a = a_.Eval(frame);
    Scalar b = b_.Eval(frame);
    if constexpr (NeedsNonzeroDivisor<T>(kOp)) {
      if (b.u == 0) {
        Report(frame, "integer division by zero");
        return Scalar{};
      }
    }
    if constexpr (!T::kFloat && IsShift(kOp)) {
      if (b.u >= IntBits<T>()) {
        Report(frame, absl::StrCat("shift amount ", T::kSigned ? absl::StrCat(b.i)
                                                             : absl::StrCat(b.u),
                                   " outside [0, ", IntBits<T>(), ")"));
        return Scalar{};
      }
    }
    return ApplyBinary<T, kOp>(a, b);
  }

  bool CollectBatchLoads(int depth, std::vector<int>* load_slots) const override {
    return a_.CollectBatchLoads(depth, load_slots) && b_.CollectBatchLoads(depth, load_slots);
  }
  void EvalBatch(Frame& frame, Batch& batch, Scalar* out) const override {
    a_.EvalBatch(frame, batch, out);
    if (batch.failed) return;
    const int n = batch.size;
    if (b_.is_constant()) {  // `i // 576`, `x * 0.5`: no batch of operands
      const Scalar b = b_.constant();
      if (!ValidRightOperand(b)) {
        batch.failed = true;
        return;
      }
      if constexpr (IsSignedIntegerDivision<T>(kOp)) {
        if (b.i > 0 && DivideByPositiveConstant(out, n, b.i, kOp == BinaryOp::kFloorMod)) return;
      }
      for (int k = 0; k < n; ++k) out[k] = ApplyBinary<T, kOp>(out[k], b);
      return;
    }
    Scalar rhs[kBatchSize];
    b_.EvalBatch(frame, batch, rhs);
    if (batch.failed) return;
    bool valid = true;
    for (int k = 0; k < n; ++k) valid &= ValidRightOperand(rhs[k]);
    if (!valid) {
      batch.failed = true;
      return;
    }
    for (int k = 0; k < n; ++k) out[k] = ApplyBinary<T, kOp>(out[k], rhs[k]);
  }

 private:
  // A nonzero divisor, a shift amount in [0, bits).
  static bool ValidRightOperand(Scalar b) {
    if constexpr (NeedsNonzeroDivisor<T>(kOp)) return b.u != 0;
    if constexpr (!T::kFloat && IsShift(kOp)) return b.u < static_cast<uint64_t>(IntBits<T>());
    return true;
  }

  void Report(Frame& frame, const std::string& problem) const {
    frame.state->Fail(absl::InvalidArgumentError(
        absl::StrCat(problem, " in `", DescribeExpr(ir_), "` (",
                     DataTypeName(ir_->a->type.dtype), ")", DescribeSpan(ir_->span))));
  }

  Operand a_;
  Operand b_;
  const BinaryNode* ir_;
};

// Bool && and ||: the right operand only when it decides the result.
template <bool kIsAnd>
class ShortCircuitExpr final : public CompiledExpr {
 public:
  ShortCircuitExpr(const CompiledExpr* a, const CompiledExpr* b) : a_(a), b_(b) {}
  Scalar Eval(Frame& frame) const override {
    bool a = a_.Eval(frame).u != 0;
    if (a != kIsAnd) return BoolScalar(a);
    return BoolScalar(b_.Eval(frame).u != 0);
  }

 private:
  Operand a_;
  Operand b_;
};

template <typename T>
class NotExpr final : public CompiledExpr {
 public:
  explicit NotExpr(const CompiledExpr* a) : a_(a) {}
  Scalar Eval(Frame& frame) const override { return ApplyNot<T>(a_.Eval(frame)); }

 private:
  Operand a_;
};

template <typename Dst, typename Src>
class CastExpr final : public CompiledExpr {
 public:
  explicit CastExpr(const CompiledExpr* value) : value_(value) {}
  Scalar Eval(Frame& frame) const override { return Convert<Dst, Src>(value_.Eval(frame)); }
  bool CollectBatchLoads(int depth, std::vector<int>* load_slots) const override {
    return value_.CollectBatchLoads(depth, load_slots);
  }
  void EvalBatch(Frame& frame, Batch& batch, Scalar* out) const override {
    value_.EvalBatch(frame, batch, out);
    for (int k = 0; k < batch.size; ++k) out[k] = Convert<Dst, Src>(out[k]);
  }

 private:
  Operand value_;
};

// Casts to and from string elements: libkiln_rt's conversions, as native code calls them (the
// run's string arena holds what they create).
inline const char* StringOf(Scalar s) { return reinterpret_cast<const char*>(s.u); }
inline Scalar WordOf(const char* text) {
  Scalar s{};
  s.u = reinterpret_cast<uint64_t>(text);
  return s;
}

template <typename Src>
class ToStringExpr final : public CompiledExpr {
 public:
  explicit ToStringExpr(const CompiledExpr* value) : value_(value) {}
  Scalar Eval(Frame& frame) const override {
    Scalar v = value_.Eval(frame);
    if constexpr (Src::kFloat) {
      if constexpr (Src::kBytes == 8) return WordOf(kiln_rt_string_from_f64(v.f64));
      return WordOf(kiln_rt_string_from_f32(v.f32));
    } else if constexpr (Src::kSigned) {
      return WordOf(kiln_rt_string_from_i64(v.i));
    } else {
      return WordOf(kiln_rt_string_from_u64(v.u));
    }
  }

 private:
  Operand value_;
};

template <typename Dst>
class FromStringExpr final : public CompiledExpr {
 public:
  explicit FromStringExpr(const CompiledExpr* value) : value_(value) {}
  Scalar Eval(Frame& frame) const override {
    const char* text = StringOf(value_.Eval(frame));
    if constexpr (Dst::kFloat) {
      if constexpr (Dst::kBytes == 8) return Dst::Make(kiln_rt_string_to_f64(text));
      return Dst::Make(kiln_rt_string_to_f32(text));
    } else if constexpr (Dst::kSigned) {
      return Dst::Wrap(static_cast<uint64_t>(kiln_rt_string_to_i64(text)));
    } else {
      return Dst::Wrap(kiln_rt_string_to_u64(text));
    }
  }

 private:
  Operand value_;
};

template <Intrinsic kOp>
class StringIntrinsicExpr final : public CompiledExpr {
 public:
  StringIntrinsicExpr(const CompiledExpr* a, const CompiledExpr* b) : a_(a), b_(b) {}
  Scalar Eval(Frame& frame) const override {
    const char* a = StringOf(a_.Eval(frame));
    if constexpr (kOp == Intrinsic::kStringUpper) return WordOf(kiln_rt_string_upper(a));
    if constexpr (kOp == Intrinsic::kStringLower) return WordOf(kiln_rt_string_lower(a));
    return BoolScalar(kiln_rt_string_equal(a, StringOf(b_.Eval(frame))) != 0);
  }

 private:
  Operand a_;
  Operand b_;
};

class SelectExpr final : public CompiledExpr {
 public:
  SelectExpr(const CompiledExpr* cond, const CompiledExpr* t, const CompiledExpr* f)
      : cond_(cond), true_(t), false_(f) {}
  Scalar Eval(Frame& frame) const override {
    return cond_.Eval(frame).u != 0 ? true_.Eval(frame) : false_.Eval(frame);
  }

 private:
  Operand cond_;
  Operand true_;
  Operand false_;
};

template <typename T>
class RampLaneExpr final : public CompiledExpr {
 public:
  RampLaneExpr(const CompiledExpr* base, const CompiledExpr* stride, int lane)
      : base_(base), stride_(stride), lane_(lane) {}
  Scalar Eval(Frame& frame) const override {
    Scalar base = base_.Eval(frame);
    Scalar stride = stride_.Eval(frame);
    if constexpr (T::kFloat) {
      using C = typename T::Compute;
      return T::Make(T::Get(base) + static_cast<C>(lane_) * T::Get(stride));
    } else {
      return T::Wrap(base.u + stride.u * static_cast<uint64_t>(lane_));
    }
  }

 private:
  Operand base_;
  Operand stride_;
  int lane_;
};

template <typename T>
class LoadExpr final : public CompiledExpr {
 public:
  LoadExpr(BufferAccess access, const BufferLoadNode* ir) : access_(std::move(access)), ir_(ir) {}
  Scalar Eval(Frame& frame) const override {
    int64_t flat = 0;
    bool ok = access_.Flat(frame, &flat);
    const StorageView& storage = frame.storages[access_.storage_slot];
    if (!ok || flat < 0 || flat >= storage.bytes / T::kBytes) {
      access_.ReportOutOfBounds(frame, "load from", T::kBytes, ir_->span);
      return Scalar{};
    }
    return T::Load(storage.data + flat * T::kBytes);
  }

 private:
  BufferAccess access_;
  const BufferLoadNode* ir_;
};

// The specialization of a one-dimensional access (every access after
// FlattenBuffer): no loop over dimensions, no overflow-checked stride.
template <typename T>
class FlatLoadExpr final : public CompiledExpr {
 public:
  FlatLoadExpr(BufferAccess access, const BufferLoadNode* ir)
      : access_(std::move(access)), index_(access_.dims[0].first), ir_(ir) {}
  Scalar Eval(Frame& frame) const override {
    int64_t index = index_.Eval(frame).i;
    const StorageView& storage = frame.storages[access_.storage_slot];
    int64_t flat;
    if (__builtin_add_overflow(index, access_.offset, &flat) || flat < 0 ||
        flat >= storage.bytes / T::kBytes) {
      access_.ReportOutOfBounds(frame, "load from", T::kBytes, ir_->span);
      return Scalar{};
    }
    return T::Load(storage.data + flat * T::kBytes);
  }

  bool CollectBatchLoads(int depth, std::vector<int>* load_slots) const override {
    load_slots->push_back(access_.storage_slot);
    return index_.CollectBatchLoads(depth, load_slots);
  }
  void EvalBatch(Frame& frame, Batch& batch, Scalar* out) const override {
    const StorageView& storage = frame.storages[access_.storage_slot];
    const int64_t size = storage.bytes / T::kBytes;
    int64_t first = BatchRange::Contiguous(batch, index_.IsVar(batch.loop_slot),
                                           access_.offset, size);
    if (first >= 0) {
      const uint8_t* data = storage.data + first * T::kBytes;
      for (int k = 0; k < batch.size; ++k) out[k] = T::Load(data + k * T::kBytes);
      return;
    }
    index_.EvalBatch(frame, batch, out);  // the indices, then the values in place
    if (batch.failed) return;
    for (int k = 0; k < batch.size; ++k) {
      int64_t flat;
      if (__builtin_add_overflow(out[k].i, access_.offset, &flat) || flat < 0 || flat >= size) {
        batch.failed = true;
        return;
      }
      out[k] = T::Load(storage.data + flat * T::kBytes);
    }
  }

 private:
  BufferAccess access_;
  Operand index_;
  const BufferLoadNode* ir_;
};

template <typename T>
class FloatUnaryExpr final : public CompiledExpr {
 public:
  using C = typename T::Compute;
  FloatUnaryExpr(UnaryMathFn<C> fn, const CompiledExpr* a) : fn_(fn), a_(a) {}
  Scalar Eval(Frame& frame) const override { return T::Make(fn_(T::Get(a_.Eval(frame)))); }

 private:
  UnaryMathFn<C> fn_;
  Operand a_;
};

template <typename T, Intrinsic kOp>
class FloatIntrinsicExpr final : public CompiledExpr {
 public:
  FloatIntrinsicExpr(const CompiledExpr* a, const CompiledExpr* b, const CompiledExpr* c)
      : a_(a), b_(b), c_(c) {}
  Scalar Eval(Frame& frame) const override {
    auto x = T::Get(a_.Eval(frame));
    if constexpr (kOp == Intrinsic::kIsNan) return BoolScalar(std::isnan(x));
    if constexpr (kOp == Intrinsic::kIsInf) return BoolScalar(std::isinf(x));
    auto y = T::Get(b_.Eval(frame));
    if constexpr (kOp == Intrinsic::kPow) return T::Make(std::pow(x, y));
    if constexpr (kOp == Intrinsic::kFmod) return T::Make(std::fmod(x, y));
    if constexpr (kOp == Intrinsic::kFma) {
      auto z = T::Get(c_.Eval(frame));
      if constexpr (T::kBytes == 2) {
        // Exact product in double, one rounding to the 16-bit format.
        return T::FromDouble(std::fma(static_cast<double>(x), static_cast<double>(y),
                                      static_cast<double>(z)));
      } else {
        return T::Make(std::fma(x, y, z));
      }
    }
    return T::Make(0);
  }

 private:
  Operand a_;
  Operand b_;
  Operand c_;
};

// Integer intrinsics with exact integer meaning.
template <typename T, Intrinsic kOp>
class IntIntrinsicExpr final : public CompiledExpr {
 public:
  IntIntrinsicExpr(const CompiledExpr* a, const CompiledExpr* b, const CompiledExpr* c,
                   const IntrinsicCallNode* ir)
      : a_(a), b_(b), c_(c), ir_(ir) {}
  Scalar Eval(Frame& frame) const override {
    Scalar a = a_.Eval(frame);
    if constexpr (kOp == Intrinsic::kAbs) {
      if constexpr (T::kSigned) return a.i < 0 ? T::Wrap(0 - a.u) : a;
      return a;
    }
    Scalar b = b_.Eval(frame);
    if constexpr (kOp == Intrinsic::kPow) return IntPow<T>(a, b);
    if constexpr (kOp == Intrinsic::kFmod) {
      if (b.u == 0) {
        frame.state->Fail(absl::InvalidArgumentError(
            absl::StrCat("integer division by zero in `", DescribeExpr(ir_), "` (",
                         DataTypeName(ir_->type.dtype), ")", DescribeSpan(ir_->span))));
        return Scalar{};
      }
      if constexpr (T::kSigned) {
        if (b.i == -1) return T::Wrap(0);
        return T::Wrap(static_cast<uint64_t>(a.i % b.i));
      }
      return T::Wrap(a.u % b.u);
    }
    if constexpr (kOp == Intrinsic::kFma) return T::Wrap(a.u * b.u + c_.Eval(frame).u);
    return Scalar{};
  }

 private:
  Operand a_;
  Operand b_;
  Operand c_;
  const IntrinsicCallNode* ir_;
};

// Math functions on integers: computed in double, cast back (saturating).
template <typename T>
class IntViaDoubleExpr final : public CompiledExpr {
 public:
  IntViaDoubleExpr(UnaryMathFn<double> fn, const CompiledExpr* a) : fn_(fn), a_(a) {}
  Scalar Eval(Frame& frame) const override {
    return T::FromDouble(fn_(T::ToDouble(a_.Eval(frame))));
  }

 private:
  UnaryMathFn<double> fn_;
  Operand a_;
};

absl::Status Unsupported(const PrimExprNode* expr, const std::string& why) {
  return absl::InvalidArgumentError(absl::StrCat("cannot interpret `", DescribeExpr(expr),
                                                 "`: ", why, DescribeSpan(expr->span)));
}

template <typename T>
const CompiledExpr* NewBinary(Compiler& c, BinaryOp op, const CompiledExpr* a,
                              const CompiledExpr* b, const BinaryNode* ir) {
  switch (op) {
#define KILN_BINARY_CASE(OP) \
  case BinaryOp::OP: return c.New<BinaryExpr<T, BinaryOp::OP>>(a, b, ir);
    KILN_BINARY_CASE(kAdd)
    KILN_BINARY_CASE(kSub)
    KILN_BINARY_CASE(kMul)
    KILN_BINARY_CASE(kDiv)
    KILN_BINARY_CASE(kFloorDiv)
    KILN_BINARY_CASE(kFloorMod)
    KILN_BINARY_CASE(kMin)
    KILN_BINARY_CASE(kMax)
    KILN_BINARY_CASE(kEQ)
    KILN_BINARY_CASE(kNE)
    KILN_BINARY_CASE(kLT)
    KILN_BINARY_CASE(kLE)
    KILN_BINARY_CASE(kGT)
    KILN_BINARY_CASE(kGE)
    KILN_BINARY_CASE(kAnd)
    KILN_BINARY_CASE(kOr)
    KILN_BINARY_CASE(kBitAnd)
    KILN_BINARY_CASE(kBitOr)
    KILN_BINARY_CASE(kBitXor)
    KILN_BINARY_CASE(kShiftLeft)
    KILN_BINARY_CASE(kShiftRight)
#undef KILN_BINARY_CASE
  }
  return nullptr;
}

Scalar ConstantOf(DataType dtype, int64_t int_value, double float_value, bool is_float_imm) {
  return VisitDataType(dtype, [&](auto traits) -> Scalar {
    using T = decltype(traits);
    if (is_float_imm) return T::FromDouble(float_value);
    if constexpr (T::kBool) {
      return BoolScalar(int_value != 0);
    } else if constexpr (T::kFloat) {
      return T::FromInt64(int_value);
    } else {
      return T::Wrap(static_cast<uint64_t>(int_value));
    }
  });
}

bool IsIntegral(DataType dtype) { return !IsFloat(dtype); }

}  // namespace

// ---------------------------------------------------------------------------
// Compilation.

absl::StatusOr<Compiler::Compiled> Compiler::CompileExpr(const PrimExpr& expr, int lane) {
  int lanes = expr->type.lanes;
  if (lanes < 1 || lanes > kMaxLanes) {
    return Unsupported(expr.get(), absl::StrCat("vectors of ", lanes,
                                                " lanes are not supported (1 to ", kMaxLanes,
                                                ")"));
  }
  if (lanes == 1) {
    lane = 0;
  } else if (lane >= lanes) {
    return Unsupported(expr.get(), absl::StrCat("a ", lanes, "-lane vector used where ",
                                                lane + 1, " lanes are needed"));
  }
  auto key = std::make_pair(expr.get(), lane);
  auto it = memo_.find(key);
  if (it != memo_.end()) return it->second;
  KILN_ASSIGN_OR_RETURN(Compiled compiled, CompileExprUncached(expr, lane));
  memo_.emplace(key, compiled);
  return compiled;
}

absl::StatusOr<Compiler::Compiled> Compiler::CompileScalar(const PrimExpr& expr, const char* role) {
  if (expr->type.lanes != 1) {
    return Unsupported(expr.get(), absl::StrCat("the ", role, " must be a scalar, not ",
                                                PrimTypeName(expr->type)));
  }
  return CompileExpr(expr, 0);
}

absl::StatusOr<Compiler::Compiled> Compiler::CompileBool(const PrimExpr& expr, int lane) {
  KILN_ASSIGN_OR_RETURN(Compiled value, CompileExpr(expr, lane));
  DataType dtype = expr->type.dtype;
  if (dtype == DataType::kBool) return value;
  const CompiledExpr* node = VisitDataType(dtype, [&](auto traits) -> const CompiledExpr* {
    return New<CastExpr<BoolTraits, decltype(traits)>>(value.node);
  });
  return Compiled{node, AddCost(value.cost, 1)};
}

absl::StatusOr<BufferAccess> Compiler::CompileAccess(const Buffer& buffer,
                                              const std::vector<PrimExpr>& indices, int lane,
                                              int64_t* cost) {
  auto storage = storages_.find(buffer->data.get());
  if (storage == storages_.end()) {
    return absl::InvalidArgumentError(
        absl::StrCat("buffer '", buffer->name, "' views storage '", buffer->data->name,
                     "', which is neither a parameter nor allocated in scope"));
  }
  if (buffer->is_symbolic() && buffer->shape.size() > 1) {
    return absl::InvalidArgumentError(absl::StrCat(
        "buffer '", buffer->name, "' has symbolic dimensions and more than one: run FlattenBuffer"));
  }
  std::vector<int64_t> strides = buffer->EffectiveStrides();
  if (indices.size() != strides.size()) {
    return absl::InvalidArgumentError(
        absl::StrCat("buffer '", buffer->name, "' has ", strides.size(),
                     " dimensions but is accessed with ", indices.size(), " indices"));
  }
  BufferAccess access;
  access.buffer = buffer.get();
  access.storage_slot = storage->second;
  access.offset = buffer->elem_offset;
  for (size_t d = 0; d < indices.size(); ++d) {
    const PrimExpr& index = indices[d];
    if (!IsIntegral(index->type.dtype)) {
      return Unsupported(index.get(), absl::StrCat("index of buffer '", buffer->name,
                                                   "' is not an integer"));
    }
    KILN_ASSIGN_OR_RETURN(Compiled compiled, CompileExpr(index, lane));
    Operand operand(compiled.node);
    access.indices.push_back(operand);
    *cost = AddCost(*cost, compiled.cost);
    int64_t term, folded;
    if (operand.is_constant() &&
        !__builtin_mul_overflow(operand.constant().i, strides[d], &term) &&
        !__builtin_add_overflow(access.offset, term, &folded)) {
      access.offset = folded;
    } else {
      access.dims.emplace_back(operand, strides[d]);
    }
  }
  return access;
}

absl::StatusOr<Compiler::Compiled> Compiler::CompileExprUncached(const PrimExpr& expr, int lane) {
  const DataType dtype = expr->type.dtype;
  switch (expr->kind()) {
    case ObjectKind::kIntImm: {
      const auto* op = expr.as<IntImmNode>();
      return Compiled{New<ConstExpr>(ConstantOf(dtype, op->value, 0.0, false)), 1};
    }
    case ObjectKind::kFloatImm: {
      const auto* op = expr.as<FloatImmNode>();
      return Compiled{New<ConstExpr>(ConstantOf(dtype, 0, op->value, true)), 1};
    }
    case ObjectKind::kStringImm:
      // The node outlives the run: the program refers to the IR it was compiled from.
      return Compiled{New<ConstExpr>(WordOf(expr.as<StringImmNode>()->value.c_str())), 1};
    case ObjectKind::kLoopVar: {
      const auto* op = expr.as<VarNode>();
      auto it = vars_.find(op);
      if (it == vars_.end()) {
        if (storages_.count(op) != 0) {
          return Unsupported(expr.get(), "a buffer's storage variable is used as a value");
        }
        return Unsupported(expr.get(), absl::StrCat("variable '", op->name,
                                                    "' is not defined here (not a loop "
                                                    "variable or let binding in scope)"));
      }
      if (it->second.lanes != expr->type.lanes) {
        return Unsupported(expr.get(), "variable bound with a different number of lanes");
      }
      return Compiled{New<VarExpr>(it->second.slot + lane), 1};
    }
    case ObjectKind::kBinary: return CompileBinary(expr.as<BinaryNode>(), lane);
    case ObjectKind::kNot: {
      const auto* op = expr.as<NotNode>();
      if (IsFloat(dtype) || dtype == DataType::kString) {
        return Unsupported(expr.get(), absl::StrCat("logical not of a ", DataTypeName(dtype)));
      }
      KILN_ASSIGN_OR_RETURN(Compiled a, CompileExpr(op->a, lane));
      const CompiledExpr* node = VisitDataType(dtype, [&](auto traits) -> const CompiledExpr* {
        using T = decltype(traits);
        if constexpr (T::kFloat) {
          return nullptr;  // rejected above
        } else {
          return New<NotExpr<T>>(a.node);
        }
      });
      return Compiled{node, AddCost(a.cost, 1)};
    }
    case ObjectKind::kCast: {
      const auto* op = expr.as<CastNode>();
      if (op->value->type.lanes != 1 && op->value->type.lanes != expr->type.lanes) {
        return Unsupported(expr.get(), "cast between vectors of different lanes");
      }
      KILN_ASSIGN_OR_RETURN(Compiled value, CompileExpr(op->value, lane));
      if (op->value->type.dtype == dtype) return value;
      const DataType src = op->value->type.dtype;
      if (dtype == DataType::kString || src == DataType::kString) {
        const DataType number = dtype == DataType::kString ? src : dtype;
        if (number == DataType::kFloat16 || number == DataType::kBFloat16 ||
            number == DataType::kBool || number == DataType::kString) {
          return Unsupported(expr.get(), "casts between strings and float16, bfloat16 or bool "
                                         "are not supported");
        }
        const CompiledExpr* node = VisitDataType(number, [&](auto traits) -> const CompiledExpr* {
          using T = decltype(traits);
          if (dtype == DataType::kString) return New<ToStringExpr<T>>(value.node);
          return New<FromStringExpr<T>>(value.node);
        });
        return Compiled{node, AddCost(value.cost, 1)};
      }
      const CompiledExpr* node = VisitDataType(dtype, [&](auto dst) -> const CompiledExpr* {
        return VisitDataType(op->value->type.dtype, [&](auto src) -> const CompiledExpr* {
          return New<CastExpr<decltype(dst), decltype(src)>>(value.node);
        });
      });
      return Compiled{node, AddCost(value.cost, 1)};
    }
    case ObjectKind::kSelect: {
      const auto* op = expr.as<SelectNode>();
      KILN_ASSIGN_OR_RETURN(Compiled cond, CompileBool(op->cond, lane));
      KILN_ASSIGN_OR_RETURN(Compiled t, CompileExpr(op->true_value, lane));
      KILN_ASSIGN_OR_RETURN(Compiled f, CompileExpr(op->false_value, lane));
      if (op->true_value->type.dtype != dtype || op->false_value->type.dtype != dtype) {
        return Unsupported(expr.get(), "select operands of different types");
      }
      // Only one operand is evaluated; charge the dearer one.
      return Compiled{New<SelectExpr>(cond.node, t.node, f.node),
                      AddCost(AddCost(cond.cost, std::max(t.cost, f.cost)), 1)};
    }
    case ObjectKind::kIntrinsicCall: return CompileIntrinsic(expr.as<IntrinsicCallNode>(), lane);
    case ObjectKind::kBufferLoad: {
      const auto* op = expr.as<BufferLoadNode>();
      if (op->buffer->dtype != dtype) {
        return Unsupported(expr.get(), "load type differs from the buffer's dtype");
      }
      int64_t cost = 1;
      KILN_ASSIGN_OR_RETURN(BufferAccess access, CompileAccess(op->buffer, op->indices, lane, &cost));
      if (expr->type.lanes > 1) access.lane = lane;
      bool flat = access.is_unit_stride();
      const CompiledExpr* node = VisitDataType(dtype, [&](auto traits) -> const CompiledExpr* {
        using T = decltype(traits);
        if (flat) return New<FlatLoadExpr<T>>(std::move(access), op);
        return New<LoadExpr<T>>(std::move(access), op);
      });
      return Compiled{node, cost};
    }
    case ObjectKind::kRamp: {
      const auto* op = expr.as<RampNode>();
      KILN_ASSIGN_OR_RETURN(Compiled base, CompileScalar(op->base, "ramp base"));
      KILN_ASSIGN_OR_RETURN(Compiled stride, CompileScalar(op->stride, "ramp stride"));
      if (op->stride->type.dtype != dtype) {
        return Unsupported(expr.get(), "ramp base and stride of different types");
      }
      const CompiledExpr* node = VisitDataType(dtype, [&](auto traits) -> const CompiledExpr* {
        return New<RampLaneExpr<decltype(traits)>>(base.node, stride.node, lane);
      });
      return Compiled{node, AddCost(AddCost(base.cost, stride.cost), 1)};
    }
    case ObjectKind::kBroadcast: {
      const auto* op = expr.as<BroadcastNode>();
      return CompileScalar(op->value, "broadcast value");
    }
    default:
      return Unsupported(expr.get(), absl::StrCat("unknown expression kind ",
                                                  ObjectKindName(expr->kind())));
  }
}

absl::StatusOr<Compiler::Compiled> Compiler::CompileBinary(const BinaryNode* op, int lane) {
  const DataType dtype = op->a->type.dtype;
  if (op->b->type.dtype != dtype) {
    return Unsupported(op, "operands of different types");
  }
  if (dtype == DataType::kString) {
    return Unsupported(op, "strings have no arithmetic or comparisons (string_equal compares them)");
  }
  bool is_logic = op->op == BinaryOp::kAnd || op->op == BinaryOp::kOr;
  if (is_logic && IsFloat(dtype)) return Unsupported(op, "logical and/or of floats");
  if (IsBitwise(op->op) && IsFloat(dtype)) {
    return Unsupported(op, absl::StrCat(BinaryOpName(op->op), " of floats"));
  }
  KILN_ASSIGN_OR_RETURN(Compiled a, CompileExpr(op->a, lane));
  KILN_ASSIGN_OR_RETURN(Compiled b, CompileExpr(op->b, lane));
  int64_t cost = AddCost(AddCost(a.cost, b.cost), 1);
  if (is_logic && dtype == DataType::kBool) {
    if (op->op == BinaryOp::kAnd) return Compiled{New<ShortCircuitExpr<true>>(a.node, b.node), cost};
    return Compiled{New<ShortCircuitExpr<false>>(a.node, b.node), cost};
  }
  const CompiledExpr* node = VisitDataType(dtype, [&](auto traits) -> const CompiledExpr* {
    return NewBinary<decltype(traits)>(*this, op->op, a.node, b.node, op);
  });
  return Compiled{node, cost};
}

absl::StatusOr<Compiler::Compiled> Compiler::CompileIntrinsic(const IntrinsicCallNode* op, int lane) {
  const Intrinsic kind = op->intrinsic;
  if (static_cast<int>(op->args.size()) != IntrinsicArity(kind)) {
    return Unsupported(op, absl::StrCat(IntrinsicName(kind), " takes ", IntrinsicArity(kind),
                                        " arguments"));
  }
  const DataType dtype = op->args[0]->type.dtype;
  for (const PrimExpr& arg : op->args) {
    if (arg->type.dtype != dtype) return Unsupported(op, "arguments of different types");
  }
  if (IsStringIntrinsic(kind) != (dtype == DataType::kString)) {
    return Unsupported(op, IsStringIntrinsic(kind) ? "arguments must be strings"
                                                   : "strings take only the string intrinsics");
  }
  if (IsStringIntrinsic(kind)) {
    const CompiledExpr* args[2] = {nullptr, nullptr};
    int64_t cost = 1;
    for (size_t i = 0; i < op->args.size(); ++i) {
      KILN_ASSIGN_OR_RETURN(Compiled arg, CompileExpr(op->args[i], lane));
      args[i] = arg.node;
      cost = AddCost(cost, arg.cost);
    }
    switch (kind) {
      case Intrinsic::kStringUpper:
        return Compiled{New<StringIntrinsicExpr<Intrinsic::kStringUpper>>(args[0], args[1]), cost};
      case Intrinsic::kStringLower:
        return Compiled{New<StringIntrinsicExpr<Intrinsic::kStringLower>>(args[0], args[1]), cost};
      default:
        return Compiled{New<StringIntrinsicExpr<Intrinsic::kStringEqual>>(args[0], args[1]), cost};
    }
  }
  bool is_predicate = kind == Intrinsic::kIsNan || kind == Intrinsic::kIsInf;
  if (op->type.dtype != (is_predicate ? DataType::kBool : dtype)) {
    return Unsupported(op, "result type does not match the arguments");
  }
  const CompiledExpr* args[3] = {nullptr, nullptr, nullptr};
  int64_t cost = 1;
  for (size_t i = 0; i < op->args.size(); ++i) {
    KILN_ASSIGN_OR_RETURN(Compiled arg, CompileExpr(op->args[i], lane));
    args[i] = arg.node;
    cost = AddCost(cost, arg.cost);
  }
  const CompiledExpr* node = VisitDataType(dtype, [&](auto traits) -> const CompiledExpr* {
    using T = decltype(traits);
    if constexpr (T::kFloat) {
      using C = typename T::Compute;
      switch (kind) {
        case Intrinsic::kIsNan:
          return New<FloatIntrinsicExpr<T, Intrinsic::kIsNan>>(args[0], args[1], args[2]);
        case Intrinsic::kIsInf:
          return New<FloatIntrinsicExpr<T, Intrinsic::kIsInf>>(args[0], args[1], args[2]);
        case Intrinsic::kPow:
          return New<FloatIntrinsicExpr<T, Intrinsic::kPow>>(args[0], args[1], args[2]);
        case Intrinsic::kFmod:
          return New<FloatIntrinsicExpr<T, Intrinsic::kFmod>>(args[0], args[1], args[2]);
        case Intrinsic::kFma:
          return New<FloatIntrinsicExpr<T, Intrinsic::kFma>>(args[0], args[1], args[2]);
        default: return New<FloatUnaryExpr<T>>(FloatUnaryMath<C>(kind), args[0]);
      }
    } else {
      switch (kind) {
        case Intrinsic::kAbs:
          return New<IntIntrinsicExpr<T, Intrinsic::kAbs>>(args[0], args[1], args[2], op);
        case Intrinsic::kPow:
          return New<IntIntrinsicExpr<T, Intrinsic::kPow>>(args[0], args[1], args[2], op);
        case Intrinsic::kFmod:
          return New<IntIntrinsicExpr<T, Intrinsic::kFmod>>(args[0], args[1], args[2], op);
        case Intrinsic::kFma:
          return New<IntIntrinsicExpr<T, Intrinsic::kFma>>(args[0], args[1], args[2], op);
        case Intrinsic::kFloor:
        case Intrinsic::kCeil:
        case Intrinsic::kRound:
        case Intrinsic::kTrunc: return args[0];  // integers are already whole
        case Intrinsic::kIsNan:
        case Intrinsic::kIsInf: return New<ConstExpr>(BoolScalar(false));
        default: return New<IntViaDoubleExpr<T>>(FloatUnaryMath<double>(kind), args[0]);
      }
    }
  });
  return Compiled{node, cost};
}

}  // namespace kiln::loop::interp
