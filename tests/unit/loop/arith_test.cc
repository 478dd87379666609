// The arithmetic simplifier: constant folding with Kiln's integer and float
// semantics, canonical linear index forms, div/mod removal from bounds, the
// bound analysis and proofs, spans of rewritten roots, and a randomized check
// that simplification never changes the value of an index expression.
#include <gtest/gtest.h>

#include <functional>
#include <limits>
#include <map>
#include <random>
#include <string>

#include "engine/loop/arith/analyzer.h"
#include "engine/loop/arith/const_fold.h"
#include "engine/loop/buffer.h"

namespace kiln::loop::arith {
namespace {

// A compact rendering for expectations: every binary node in parentheses.
std::string Str(const PrimExpr& e) {
  if (const auto* imm = e.as<IntImmNode>()) return std::to_string(imm->value);
  if (const auto* imm = e.as<FloatImmNode>()) return std::to_string(imm->value);
  if (const auto* var = e.as<VarNode>()) return var->name;
  if (const auto* b = e.as<BinaryNode>()) {
    const char* sym = nullptr;
    switch (b->op) {
      case BinaryOp::kAdd: sym = "+"; break;
      case BinaryOp::kSub: sym = "-"; break;
      case BinaryOp::kMul: sym = "*"; break;
      case BinaryOp::kDiv: sym = "/"; break;
      case BinaryOp::kFloorDiv: sym = "//"; break;
      case BinaryOp::kFloorMod: sym = "%"; break;
      case BinaryOp::kLT: sym = "<"; break;
      case BinaryOp::kLE: sym = "<="; break;
      case BinaryOp::kGT: sym = ">"; break;
      case BinaryOp::kGE: sym = ">="; break;
      case BinaryOp::kEQ: sym = "=="; break;
      case BinaryOp::kNE: sym = "!="; break;
      case BinaryOp::kAnd: sym = "&&"; break;
      case BinaryOp::kOr: sym = "||"; break;
      default: return std::string(BinaryOpName(b->op)) + "(" + Str(b->a) + ", " + Str(b->b) + ")";
    }
    return "(" + Str(b->a) + " " + sym + " " + Str(b->b) + ")";
  }
  if (const auto* n = e.as<NotNode>()) return "!" + Str(n->a);
  if (const auto* s = e.as<SelectNode>()) {
    return "select(" + Str(s->cond) + ", " + Str(s->true_value) + ", " + Str(s->false_value) + ")";
  }
  if (const auto* r = e.as<RampNode>()) {
    return "ramp(" + Str(r->base) + ", " + Str(r->stride) + ", " + std::to_string(r->lanes) + ")";
  }
  if (const auto* b = e.as<BroadcastNode>()) {
    return "broadcast(" + Str(b->value) + ", " + std::to_string(b->lanes) + ")";
  }
  return "?";
}

int64_t IntValue(const PrimExpr& e) {
  const auto* imm = e.as<IntImmNode>();
  EXPECT_NE(imm, nullptr) << "not an IntImm: " << Str(e);
  return imm == nullptr ? 0 : imm->value;
}

double FloatValue(const PrimExpr& e) {
  const auto* imm = e.as<FloatImmNode>();
  EXPECT_NE(imm, nullptr) << "not a FloatImm: " << Str(e);
  return imm == nullptr ? 0 : imm->value;
}

PrimExpr I(int64_t v) { return IntImm(v); }

// ---------------------------------------------------------------------------
// Constant folding

TEST(ArithConstFoldTest, IntegerDivisionTruncatesAndFloorDivisionRoundsDown) {
  EXPECT_EQ(IntValue(Simplify(MakeBinary(BinaryOp::kDiv, I(7), I(-2)))), -3);
  EXPECT_EQ(IntValue(Simplify(MakeBinary(BinaryOp::kDiv, I(-7), I(2)))), -3);
  EXPECT_EQ(IntValue(Simplify(FloorDiv(I(7), I(-2)))), -4);
  EXPECT_EQ(IntValue(Simplify(FloorDiv(I(-7), I(2)))), -4);
  EXPECT_EQ(IntValue(Simplify(FloorDiv(I(-8), I(2)))), -4);
  EXPECT_EQ(IntValue(Simplify(FloorMod(I(-7), I(2)))), 1);
  EXPECT_EQ(IntValue(Simplify(FloorMod(I(7), I(-2)))), -1);
  EXPECT_EQ(IntValue(Simplify(FloorMod(I(-6), I(3)))), 0);
  EXPECT_EQ(IntValue(Simplify(FloorMod(I(7), I(3)))), 1);
}

TEST(ArithConstFoldTest, DivisionByZeroIsLeftForRunTime) {
  PrimExpr e = FloorDiv(I(7), I(0));
  EXPECT_TRUE(Simplify(e).same_as(e));
}

TEST(ArithConstFoldTest, NarrowIntegersWrap) {
  PrimType i32{DataType::kInt32, 1};
  PrimExpr sum = IntImm(2147483647, i32) + IntImm(1, i32);
  PrimExpr folded = Simplify(sum);
  EXPECT_EQ(IntValue(folded), -2147483648LL);
  EXPECT_EQ(folded->type, i32);
  PrimType u8{DataType::kUInt8, 1};
  EXPECT_EQ(IntValue(Simplify(IntImm(3, u8) - IntImm(5, u8))), 254);
  // Unsigned comparison: 254 > 3.
  EXPECT_EQ(IntValue(Simplify(IntImm(254, u8) > IntImm(3, u8))), 1);
}

TEST(ArithConstFoldTest, FloatsFoldInDoubleAndRoundToTheirType) {
  PrimExpr third = Simplify(FloatImm(1.0) / FloatImm(3.0));
  EXPECT_EQ(third->type, kFloat32Type);
  EXPECT_EQ(FloatValue(third), static_cast<double>(1.0f / 3.0f));
  EXPECT_NE(FloatValue(third), 1.0 / 3.0);
  PrimType f64{DataType::kFloat64, 1};
  EXPECT_EQ(FloatValue(Simplify(FloatImm(1.0, f64) / FloatImm(3.0, f64))), 1.0 / 3.0);
  EXPECT_EQ(FloatValue(Simplify(FloatImm(0.1) + FloatImm(0.2))),
            static_cast<double>(0.1f + 0.2f));
}

TEST(ArithConstFoldTest, ComparisonsNotCastsSelectsMinMax) {
  PrimExpr lt = Simplify(I(3) < I(4));
  EXPECT_EQ(lt->type, kBoolType);
  EXPECT_EQ(IntValue(lt), 1);
  EXPECT_EQ(IntValue(Simplify(MakeNot(I(3) < I(4)))), 0);
  EXPECT_EQ(IntValue(Simplify(MakeCast(kIndexType, FloatImm(2.7)))), 2);
  EXPECT_EQ(IntValue(Simplify(MakeCast(kIndexType, FloatImm(-2.7)))), -2);
  EXPECT_EQ(FloatValue(Simplify(MakeCast(kFloat32Type, I(16777217)))), 16777216.0);
  PrimExpr nan_cast = MakeCast(kIndexType, FloatImm(std::numeric_limits<double>::quiet_NaN()));
  EXPECT_TRUE(Simplify(nan_cast).same_as(nan_cast));
  Var x = MakeVar("x");
  Var y = MakeVar("y");
  EXPECT_TRUE(Simplify(MakeSelect(I(1) < I(2), x, y)).same_as(x));
  EXPECT_TRUE(Simplify(MakeSelect(BoolImm(false), x, y)).same_as(y));
  EXPECT_EQ(IntValue(Simplify(Min(I(-3), I(5)))), -3);
  EXPECT_EQ(IntValue(Simplify(Max(I(-3), I(5)))), 5);
}

TEST(ArithConstFoldTest, BitwiseAndShifts) {
  EXPECT_EQ(IntValue(Simplify(MakeBinary(BinaryOp::kBitAnd, I(12), I(10)))), 8);
  EXPECT_EQ(IntValue(Simplify(MakeBinary(BinaryOp::kShiftRight, I(-8), I(1)))), -4);
  PrimType u8{DataType::kUInt8, 1};
  EXPECT_EQ(IntValue(Simplify(MakeBinary(BinaryOp::kShiftLeft, IntImm(200, u8), IntImm(1, u8)))),
            144);
  PrimExpr too_far = MakeBinary(BinaryOp::kShiftLeft, I(1), I(64));
  EXPECT_TRUE(Simplify(too_far).same_as(too_far));
}

TEST(ArithConstFoldTest, BroadcastConstantsFoldLanewise) {
  PrimExpr sum = Simplify(MakeBroadcast(I(2), 4) + MakeBroadcast(I(3), 4));
  const auto* broadcast = sum.as<BroadcastNode>();
  ASSERT_NE(broadcast, nullptr);
  EXPECT_EQ(broadcast->lanes, 4);
  EXPECT_EQ(IntValue(broadcast->value), 5);
}

// ---------------------------------------------------------------------------
// Canonical forms

TEST(ArithSimplifyTest, LinearTermsCancel) {
  Var i = MakeVar("i");
  Var j = MakeVar("j");
  EXPECT_EQ(Str(Simplify(i * 4 + j * 4 - i * 4)), "(j * 4)");
  EXPECT_EQ(IntValue(Simplify(i - i)), 0);
  EXPECT_EQ(Str(Simplify((i + 2) * 3 - 6)), "(i * 3)");
  EXPECT_EQ(Str(Simplify(j + i + j)), "((j * 2) + i)");
  EXPECT_EQ(Str(Simplify(I(8) - i)), "(8 - i)");
  EXPECT_EQ(Str(Simplify(i - j - 3)), "((i - j) - 3)");
}

TEST(ArithSimplifyTest, IdentitiesReturnTheOperandItself) {
  Var x = MakeVar("x");
  PrimExpr y = MakeVar("y") * 3;
  EXPECT_TRUE(Simplify(x * 1).same_as(x));
  EXPECT_TRUE(Simplify(x + 0).same_as(x));
  EXPECT_TRUE(Simplify(y + 0).same_as(y));
  EXPECT_TRUE(Simplify(I(1) * y).same_as(y));
  EXPECT_EQ(IntValue(Simplify(x * 0)), 0);
  PrimType i32{DataType::kInt32, 1};
  Var n = MakeVar("n", i32);
  EXPECT_TRUE(Simplify(n + IntImm(0, i32)).same_as(n));
  EXPECT_EQ(IntValue(Simplify(n - n)), 0);
}

TEST(ArithSimplifyTest, FloatIdentitiesRespectSignedZeroAndNaN) {
  Var f = MakeVar("f", kFloat32Type);
  EXPECT_TRUE(Simplify(f * FloatImm(1.0)).same_as(f));
  EXPECT_TRUE(Simplify(f - FloatImm(0.0)).same_as(f));
  // -0.0 + 0.0 is +0.0, and NaN - NaN is NaN: neither rewrite is exact.
  PrimExpr plus_zero = f + FloatImm(0.0);
  EXPECT_TRUE(Simplify(plus_zero).same_as(plus_zero));
  PrimExpr self_sub = f - f;
  EXPECT_TRUE(Simplify(self_sub).same_as(self_sub));
}

TEST(ArithSimplifyTest, UnchangedExpressionsStayTheSameNode) {
  Var i = MakeVar("i");
  Var j = MakeVar("j");
  PrimExpr e = i * 8 + j;
  EXPECT_TRUE(Simplify(e).same_as(e));
  PrimExpr load = MakeBufferLoad(MakeBuffer("A", DataType::kFloat32, {16}), {e});
  EXPECT_TRUE(Simplify(load).same_as(load));
}

TEST(ArithSimplifyTest, DivModByBoundsOfTheRemainder) {
  Var i = MakeVar("i");
  Var j = MakeVar("j");
  Analyzer analyzer;
  analyzer.Bind(i, 0, 4);
  analyzer.Bind(j, 0, 8);
  EXPECT_TRUE(analyzer.Simplify(FloorDiv(i * 8 + j, 8)).same_as(i));
  EXPECT_TRUE(analyzer.Simplify(FloorMod(i * 8 + j, 8)).same_as(j));
  // 3 + j spans two periods of 8: only the multiple of 8 comes out.
  EXPECT_EQ(Str(analyzer.Simplify(FloorDiv(i * 8 + j + 3, 8))), "(i + ((j + 3) // 8))");
  EXPECT_EQ(Str(analyzer.Simplify(FloorMod(i * 8 + j + 3, 8))), "((j + 3) % 8)");
  // Truncating division of a non-negative value is floor division.
  EXPECT_TRUE(analyzer.Simplify(MakeBinary(BinaryOp::kDiv, i * 8 + j, I(8))).same_as(i));
  EXPECT_EQ(IntValue(analyzer.Simplify(FloorDiv(j, 8))), 0);
  EXPECT_EQ(IntValue(analyzer.Simplify(FloorMod(i * 16 + 20, 8))), 4);

  // Without ranges only the divisible part is taken out.
  Var u = MakeVar("u");
  Var v = MakeVar("v");
  EXPECT_EQ(Str(Simplify(FloorDiv(u * 8 + v, 8))), "(u + (v // 8))");
  EXPECT_EQ(Str(Simplify(FloorMod(u * 8 + v, 8))), "(v % 8)");
}

TEST(ArithSimplifyTest, FuseIndexMathCollapses) {
  Var f = MakeVar("fused");
  // Splitting a fused index back: outer * 8 + inner == fused.
  EXPECT_TRUE(Simplify(FloorDiv(f, 8) * 8 + FloorMod(f, 8)).same_as(f));
  EXPECT_EQ(Str(Simplify(FloorDiv(f, 4) * 8 + FloorMod(f, 4) * 2 + 1)), "((fused * 2) + 1)");
  EXPECT_EQ(Str(Simplify(FloorDiv(FloorDiv(f, 4), 8))), "(fused // 32)");
  EXPECT_EQ(Str(Simplify(FloorMod(FloorMod(f, 32), 8))), "(fused % 8)");
}

TEST(ArithSimplifyTest, AFlattenedFuseOfFourAxesIsTheFusedIndex) {
  // A (256, 256, 3, 3) tensor indexed by one fused variable, flattened back
  // with strides (2304, 9, 3, 1): the offset is the fused index itself.
  Var f = MakeVar("fused");
  PrimExpr offset = FloorDiv(f, 2304) * 2304 + FloorMod(FloorDiv(f, 9), 256) * 9 +
                    FloorMod(FloorDiv(f, 3), 3) * 3 + FloorMod(f, 3);
  EXPECT_TRUE(Simplify(offset).same_as(f)) << Str(Simplify(offset));
  // Two inner levels alone: ((f // 3) % 3) * 3 + f % 3 == f % 9.
  EXPECT_EQ(Str(Simplify(FloorMod(FloorDiv(f, 3), 3) * 3 + FloorMod(f, 3))), "(fused % 9)");
}

TEST(ArithSimplifyTest, ComparisonsMinMaxAndSelectsFromBounds) {
  Var i = MakeVar("i");
  Var j = MakeVar("j");
  Analyzer analyzer;
  analyzer.Bind(i, 0, 8);
  analyzer.Bind(j, 0, 8);
  EXPECT_EQ(IntValue(analyzer.Simplify(i < I(8))), 1);
  EXPECT_EQ(IntValue(analyzer.Simplify(i >= I(8))), 0);
  EXPECT_TRUE(analyzer.Simplify(Min(i, I(100))).same_as(i));
  EXPECT_EQ(IntValue(analyzer.Simplify(Max(i, I(100)))), 100);
  // The difference decides, whatever the range: i + 3 < i + 5.
  Var x = MakeVar("x");
  EXPECT_EQ(IntValue(Simplify(x + 3 < x + 5)), 1);
  EXPECT_EQ(Str(Simplify(Min(x + 3, x + 5))), "(x + 3)");
  PrimExpr undecided = i * 8 + j < I(60);
  EXPECT_EQ(Str(analyzer.Simplify(undecided)), "(((i * 8) + j) < 60)");
  Var y = MakeVar("y");
  EXPECT_TRUE(analyzer.Simplify(MakeSelect(i < I(9), x, y)).same_as(x));
  EXPECT_TRUE(Simplify(MakeSelect(x < y, y, y)).same_as(y));
  EXPECT_EQ(Str(Simplify(MakeNot(x < y))), "(x >= y)");
  EXPECT_EQ(Str(Simplify(BoolImm(true) && (x < y))), "(x < y)");
  EXPECT_EQ(IntValue(Simplify(BoolImm(false) && (x < y))), 0);
  EXPECT_EQ(IntValue(Simplify((x < y) || BoolImm(true))), 1);
}

TEST(ArithSimplifyTest, RampAndBroadcastArithmetic) {
  Var j = MakeVar("j");
  PrimExpr ramp = MakeRamp(I(0), I(1), 4);
  PrimExpr index = ramp * MakeBroadcast(I(8), 4) + MakeBroadcast(j, 4);
  EXPECT_EQ(Str(Simplify(index)), "ramp(j, 8, 4)");
  EXPECT_EQ(Str(Simplify(MakeRamp(j, I(0), 4))), "broadcast(j, 4)");
}

TEST(ArithSimplifyTest, AlignedUnitRampsDivideIntoOneValue) {
  Var x = MakeVar("x");
  // Lanes 8x .. 8x + 7 lie in one row of 1024: row 8x // 1024, columns from 8x % 1024.
  PrimExpr ramp = MakeRamp(x * 8, I(1), 8);
  EXPECT_EQ(Str(Simplify(FloorDiv(ramp, MakeBroadcast(I(1024), 8)))), "broadcast(((x * 8) // 1024), 8)");
  EXPECT_EQ(Str(Simplify(FloorMod(ramp, MakeBroadcast(I(1024), 8)))), "ramp(((x * 8) % 1024), 1, 8)");
  EXPECT_EQ(Str(Simplify(FloorMod(ramp, MakeBroadcast(I(8), 8)))), "ramp(0, 1, 8)");
  // A ramp from 8x + 4 crosses a multiple of 8, and one of 12 lanes may cross 1024: unchanged.
  PrimExpr shifted = MakeRamp(x * 8 + 4, I(1), 8);
  EXPECT_EQ(Simplify(FloorDiv(shifted, MakeBroadcast(I(8), 8))).as<BroadcastNode>(), nullptr);
  EXPECT_EQ(Simplify(FloorMod(shifted, MakeBroadcast(I(8), 8))).as<RampNode>(), nullptr);
  PrimExpr twelve = MakeRamp(x * 12, I(1), 12);
  EXPECT_EQ(Simplify(FloorDiv(twelve, MakeBroadcast(I(1024), 12))).as<BroadcastNode>(), nullptr);
}

TEST(ArithSimplifyTest, ABoundVariableOfOneValueBecomesThatConstant) {
  Var i = MakeVar("i");
  Var j = MakeVar("j");
  Analyzer analyzer;
  analyzer.Bind(i, 5, 1);
  EXPECT_EQ(Str(analyzer.Simplify(i * 8 + j)), "(j + 40)");
}

// ---------------------------------------------------------------------------
// Spans

TEST(ArithSpanTest, ARewrittenRootCarriesTheSpanOfWhatItReplaced) {
  Var i = MakeVar("i");
  Var j = MakeVar("j");
  Span span = MakeSpan("conv1");
  PrimExpr root = MakeBinary(BinaryOp::kSub, i * 4 + j * 4, i * 4, span);
  PrimExpr result = Simplify(root);
  EXPECT_EQ(Str(result), "(j * 4)");
  EXPECT_TRUE(SpanEqual(result->span, span));

  PrimExpr folded = Simplify(MakeBinary(BinaryOp::kAdd, I(2), I(3), span));
  EXPECT_EQ(IntValue(folded), 5);
  EXPECT_TRUE(SpanEqual(folded->span, span));

  Analyzer analyzer;
  analyzer.Bind(i, 0, 4);
  analyzer.Bind(j, 0, 8);
  PrimExpr div = MakeBinary(BinaryOp::kFloorDiv, i * 8 + j + 16, I(8), span);
  PrimExpr divided = analyzer.Simplify(div);
  EXPECT_EQ(Str(divided), "(i + 2)");
  EXPECT_TRUE(SpanEqual(divided->span, span));
}

// ---------------------------------------------------------------------------
// Bounds and proofs

TEST(ArithBoundTest, ConstIntBoundOfIndexExpressions) {
  Var i = MakeVar("i");
  Var j = MakeVar("j");
  Analyzer analyzer;
  analyzer.Bind(i, 0, 8);
  analyzer.Bind(j, 0, 8);
  EXPECT_EQ(*analyzer.ConstIntBound(i * 8 + j), (Interval{0, 63}));
  EXPECT_EQ(*analyzer.ConstIntBound(i - j * 2), (Interval{-14, 7}));
  EXPECT_EQ(*analyzer.ConstIntBound(FloorDiv(i * 8 + j, 3)), (Interval{0, 21}));
  EXPECT_EQ(*analyzer.ConstIntBound(FloorDiv(i - 9, 2)), (Interval{-5, -1}));
  // i - 5 in [-5, 2]: more than one period of 4, so the whole [0, 3].
  EXPECT_EQ(*analyzer.ConstIntBound(FloorMod(i - 5, 4)), (Interval{0, 3}));
  // i + 8 in [8, 15]: one period, shifted down by 8.
  EXPECT_EQ(*analyzer.ConstIntBound(FloorMod(i + 8, 16)), (Interval{8, 15}));
  EXPECT_EQ(*analyzer.ConstIntBound(MakeBinary(BinaryOp::kDiv, i - 7, I(2))), (Interval{-3, 0}));
  EXPECT_EQ(*analyzer.ConstIntBound(Min(i, j - 3)), (Interval{-3, 4}));
  EXPECT_EQ(*analyzer.ConstIntBound(Max(i, I(5))), (Interval{5, 7}));
  EXPECT_EQ(*analyzer.ConstIntBound(MakeSelect(i < j, i * 2, I(-1))), (Interval{-1, 14}));
  EXPECT_EQ(*analyzer.ConstIntBound(i < j), (Interval{0, 1}));

  PrimType i32{DataType::kInt32, 1};
  EXPECT_EQ(*analyzer.ConstIntBound(MakeCast(i32, i * 8)), (Interval{0, 56}));
  Var unbound = MakeVar("n");
  EXPECT_EQ(*analyzer.ConstIntBound(MakeCast(i32, unbound)),
            (Interval{-2147483648LL, 2147483647LL}));
  Interval everything = *analyzer.ConstIntBound(unbound * 2);
  EXPECT_FALSE(everything.bounded_below());
  EXPECT_FALSE(everything.bounded_above());
  Interval half = *analyzer.ConstIntBound(Max(unbound, I(3)));
  EXPECT_EQ(half.min, 3);
  EXPECT_FALSE(half.bounded_above());
  EXPECT_FALSE(analyzer.ConstIntBound(FloatImm(1.0)).has_value());
}

TEST(ArithBoundTest, OverflowingBoundsBecomeUnbounded) {
  Var big = MakeVar("big");
  Analyzer analyzer;
  analyzer.Bind(big, 0, std::numeric_limits<int64_t>::max() / 2);
  Interval product = *analyzer.ConstIntBound(big * 4);
  EXPECT_FALSE(product.bounded_above());
}

TEST(ArithProveTest, CanProveComparisonsFromLoopRanges) {
  Var i = MakeVar("i");
  Var j = MakeVar("j");
  Analyzer analyzer;
  analyzer.Bind(i, 0, 64);
  EXPECT_TRUE(analyzer.CanProve(i < I(64)));
  EXPECT_FALSE(analyzer.CanProve(i < I(63)));
  EXPECT_TRUE(analyzer.CanProve(i >= I(0)));
  analyzer.Bind(i, 0, 8);
  analyzer.Bind(j, 0, 8);
  EXPECT_FALSE(analyzer.CanProve(i * 8 + j < I(60)));
  EXPECT_FALSE(analyzer.CanProve(i * 8 + j >= I(60)));
  EXPECT_TRUE(analyzer.CanProve(i * 8 + j < I(64)));
  EXPECT_TRUE(analyzer.CanProve(NotEqual(i * 8 + j, I(64))));
  EXPECT_FALSE(analyzer.CanProve(Equal(i, j)));
  // A loop that never runs (a zero-size dimension) binds without failing.
  Var empty = MakeVar("empty");
  analyzer.Bind(empty, 3, 0);
  EXPECT_EQ(*analyzer.VarRange(empty), (Interval{3, 3}));
}

TEST(ArithProveTest, ConstraintsHoldOnlyInsideTheirScope) {
  Var i = MakeVar("i");
  Var j = MakeVar("j");
  Analyzer analyzer;
  analyzer.Bind(i, 0, 8);
  analyzer.Bind(j, 0, 8);
  PrimExpr cond = i * 8 + j < I(60);
  {
    Analyzer::ConstraintScope scope(&analyzer, cond && (i < I(5)));
    EXPECT_TRUE(analyzer.CanProve(cond));
    EXPECT_FALSE(analyzer.CanProve(MakeNot(cond)));
    EXPECT_EQ(IntValue(analyzer.Simplify(i * 8 + j >= I(60))), 0);
    EXPECT_TRUE(analyzer.CanProve(i < I(5)));
    EXPECT_EQ(*analyzer.VarRange(i), (Interval{0, 4}));
  }
  EXPECT_FALSE(analyzer.CanProve(cond));
  EXPECT_FALSE(analyzer.CanProve(i < I(5)));
  EXPECT_EQ(*analyzer.VarRange(i), (Interval{0, 7}));
  {
    Analyzer::ConstraintScope scope(&analyzer, Equal(j, I(3)));
    EXPECT_EQ(Str(analyzer.Simplify(i * 8 + j)), "((i * 8) + 3)");
  }
}

// ---------------------------------------------------------------------------
// Randomized: simplification preserves the value at every point.

using Env = std::map<const VarNode*, int64_t>;

int64_t Eval(const PrimExpr& e, const Env& env) {
  if (const auto* imm = e.as<IntImmNode>()) return imm->value;
  if (const auto* var = e.as<VarNode>()) return env.at(var);
  if (const auto* n = e.as<NotNode>()) return Eval(n->a, env) == 0;
  if (const auto* s = e.as<SelectNode>()) {
    return Eval(s->cond, env) != 0 ? Eval(s->true_value, env) : Eval(s->false_value, env);
  }
  if (const auto* c = e.as<CastNode>()) return Eval(c->value, env);
  const auto* b = e.as<BinaryNode>();
  if (b == nullptr) {
    ADD_FAILURE() << "cannot evaluate " << Str(e);
    return 0;
  }
  int64_t x = Eval(b->a, env);
  int64_t y = Eval(b->b, env);
  // Floor division by hand (an oracle independent of const_fold.cc).
  auto floor_div = [](int64_t p, int64_t q) {
    int64_t d = p / q;
    if (d * q != p && ((p < 0) != (q < 0))) d -= 1;
    return d;
  };
  switch (b->op) {
    case BinaryOp::kAdd: return x + y;
    case BinaryOp::kSub: return x - y;
    case BinaryOp::kMul: return x * y;
    case BinaryOp::kDiv: return x / y;
    case BinaryOp::kFloorDiv: return floor_div(x, y);
    case BinaryOp::kFloorMod: return x - floor_div(x, y) * y;
    case BinaryOp::kMin: return std::min(x, y);
    case BinaryOp::kMax: return std::max(x, y);
    case BinaryOp::kEQ: return x == y;
    case BinaryOp::kNE: return x != y;
    case BinaryOp::kLT: return x < y;
    case BinaryOp::kLE: return x <= y;
    case BinaryOp::kGT: return x > y;
    case BinaryOp::kGE: return x >= y;
    case BinaryOp::kAnd: return x != 0 && y != 0;
    case BinaryOp::kOr: return x != 0 || y != 0;
    default: ADD_FAILURE() << "unexpected operator in " << Str(e); return 0;
  }
}

class RandomExprs {
 public:
  RandomExprs(std::vector<Var> vars, uint32_t seed) : vars_(std::move(vars)), rng_(seed) {}

  PrimExpr Index(int depth) {
    if (depth == 0 || Pick(5) == 0) {
      if (Pick(3) == 0) return I(Pick(19) - 9);
      return vars_[Pick(static_cast<int>(vars_.size()))];
    }
    static const int64_t kDivisors[] = {-3, -2, 1, 2, 3, 4, 8};
    switch (Pick(11)) {
      case 0: case 1: return Index(depth - 1) + Index(depth - 1);
      case 2: return Index(depth - 1) - Index(depth - 1);
      case 3: return Index(depth - 1) * I(Pick(9) - 4);
      case 4: return Index(depth - 1) * Index(depth - 1);
      case 5: return FloorDiv(Index(depth - 1), I(kDivisors[Pick(7)]));
      case 6: return FloorMod(Index(depth - 1), I(kDivisors[Pick(7)]));
      case 7: return MakeBinary(BinaryOp::kDiv, Index(depth - 1), I(kDivisors[Pick(7)]));
      case 8: return Pick(2) ? Min(Index(depth - 1), Index(depth - 1))
                             : Max(Index(depth - 1), Index(depth - 1));
      case 9: return MakeSelect(Cond(depth - 1), Index(depth - 1), Index(depth - 1));
      default:
        // The split/fuse shape: (x // c) * c + x % c.
        {
          PrimExpr x = Index(depth - 1);
          int64_t c = kDivisors[3 + Pick(4)];
          return FloorDiv(x, I(c)) * I(c) + FloorMod(x, I(c));
        }
    }
  }

  PrimExpr Cond(int depth) {
    static const BinaryOp kOps[] = {BinaryOp::kLT, BinaryOp::kLE, BinaryOp::kGT,
                                    BinaryOp::kGE, BinaryOp::kEQ, BinaryOp::kNE};
    PrimExpr c = MakeBinary(kOps[Pick(6)], Index(depth), Index(depth));
    switch (Pick(5)) {
      case 0: return MakeNot(c);
      case 1: return c && Cond(depth > 0 ? depth - 1 : 0);
      case 2: return c || Cond(depth > 0 ? depth - 1 : 0);
      default: return c;
    }
  }

 private:
  int Pick(int n) { return std::uniform_int_distribution<int>(0, n - 1)(rng_); }
  std::vector<Var> vars_;
  std::mt19937 rng_;
};

TEST(ArithRandomTest, SimplifyPreservesValuesAndBoundsContainThem) {
  Var i = MakeVar("i");
  Var j = MakeVar("j");
  Var k = MakeVar("k");
  struct Range {
    Var var;
    int64_t min, extent;
  };
  const Range ranges[] = {{i, 0, 4}, {j, 0, 8}, {k, -3, 6}};
  Analyzer analyzer;
  for (const Range& r : ranges) analyzer.Bind(r.var, r.min, r.extent);

  RandomExprs gen({i, j, k}, 20240611);
  int simplified_count = 0;
  for (int n = 0; n < 1500; ++n) {
    bool is_cond = n % 4 == 3;
    PrimExpr e = is_cond ? gen.Cond(3) : gen.Index(4);
    PrimExpr s = analyzer.Simplify(e);
    if (!s.same_as(e)) ++simplified_count;
    Interval bound = *analyzer.ConstIntBound(e);
    Interval simplified_bound = *analyzer.ConstIntBound(s);
    bool proven = is_cond && analyzer.CanProve(e);
    for (int64_t vi = 0; vi < 4; ++vi) {
      for (int64_t vj = 0; vj < 8; ++vj) {
        for (int64_t vk = -3; vk < 3; ++vk) {
          Env env{{i.get(), vi}, {j.get(), vj}, {k.get(), vk}};
          int64_t expected = Eval(e, env);
          int64_t actual = Eval(s, env);
          ASSERT_EQ(actual, expected) << Str(e) << "\n  simplified to " << Str(s)
                                      << "\n  at i=" << vi << " j=" << vj << " k=" << vk;
          ASSERT_TRUE(bound.contains(expected)) << Str(e) << " bound [" << bound.min << ", "
                                                << bound.max << "] misses " << expected;
          ASSERT_TRUE(simplified_bound.contains(expected)) << Str(s);
          if (proven) {
            ASSERT_NE(expected, 0) << "proved but false: " << Str(e);
          }
        }
      }
    }
  }
  // The generator must exercise the rewriter, not only pass things through.
  EXPECT_GT(simplified_count, 500);
}

}  // namespace
}  // namespace kiln::loop::arith
