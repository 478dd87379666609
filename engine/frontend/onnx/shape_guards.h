// Shape-deciding operands known only at run time. When an operand that decides an output shape (a
// Reshape's shape, TopK's k, the number of NonZero's results) is neither a constant nor
// computable at import, but the model declares the static shape it decides, the converter
// compiles that shape and guards its result: a check of the operand that main runs before any
// kernel reads the result, failing the run (KILN_ERROR_SHAPE_MISMATCH natively, an error naming
// the node in the interpreter) when the operand asks for another shape. The model's own
// declaration is what is compiled in, never a value of the operand; a model that declares nothing
// keeps the old error asking for the operand's value or static input shapes.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "engine/frontend/onnx/convert_context.h"

namespace kiln::onnx_frontend {

// What each element of a small integer operand may hold for the compiled shape.
struct OperandRule {
  std::vector<std::vector<int64_t>> allowed;  // one list per element; an empty list: any value
  int64_t distinct_modulo = 0;  // > 0: elements (negative ones plus this) pairwise distinct
  std::vector<int64_t> at_most_once;  // values that may appear at most once (Reshape's -1)
};

// "[4, 2, 3]".
std::string DimsString(const std::vector<int64_t>& dims);

// True when input `i` is given and its value is known only at run time (not a constant, not a
// value the caller fixed).
bool KnownOnlyAtRunTime(const ConvertContext& ctx, size_t i);

// Input `i`'s static shape, or an error saying a declared shape needs it.
absl::StatusOr<std::vector<int64_t>> StaticInputShape(const ConvertContext& ctx, size_t i);

// The static shape the model declares for output `output`, or an error saying that input
// `operand` (`what`) must be known at import or that output's shape declared.
absl::StatusOr<std::vector<int64_t>> DeclaredShapeOrError(const ConvertContext& ctx, size_t output,
                                                          size_t operand, std::string_view what);

// For a shape operand that must equal `declared` exactly (ConstantOfShape's shape, Resize's
// sizes, MaxUnpool's output_shape): checks that input `operand` (`what`) is 1-D of the declared
// rank and returns the rule allowing each element only its extent.
absl::StatusOr<OperandRule> ExactShapeRule(const ConvertContext& ctx, size_t operand,
                                           std::string_view what,
                                           const std::vector<int64_t>& declared);

// `value`, checked when the model runs: input `operand` must follow `rule`; else the run fails
// saying `expectation` ("give the declared shape [4, 2, 3]").
absl::StatusOr<Expr> GuardOperand(ConvertContext& ctx, const Expr& value, size_t operand,
                                  const OperandRule& rule, std::string_view expectation);

// `value`, checked when the model runs: `condition` (a bool scalar) must hold.
absl::StatusOr<Expr> GuardCondition(ConvertContext& ctx, const Expr& value, const Expr& condition,
                                    std::string_view expectation);

// The rule for an axes operand of `count` elements (each in [-rank, rank)) when the axis sets
// that give the compiled shape are those `gives` accepts among the count-subsets of [0, rank):
// every element one of the axes in some such set, all distinct. An error when that is not exact
// (the sets accepted are not all count-subsets of their union), which is when no single rule of
// allowed values can tell a right operand from a wrong one.
// `accepted`, when given, receives the accepted sets (ascending axes each).
absl::StatusOr<OperandRule> AxesRule(const ConvertContext& ctx, int64_t count, int64_t rank,
                                     const std::function<bool(const std::vector<int64_t>&)>& gives,
                                     std::vector<std::vector<int64_t>>* accepted = nullptr);

// The int64 scalar count(x != 0), counting along the whole of `x`.
absl::StatusOr<Expr> NonzeroCount(ConvertContext& ctx, const Expr& x);
// The bool scalar `count(x != 0) == expected`, counting along the whole of `x`.
absl::StatusOr<Expr> NonzeroCountIs(ConvertContext& ctx, const Expr& x, int64_t expected);

}  // namespace kiln::onnx_frontend
