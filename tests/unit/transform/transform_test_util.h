// Helpers for pass tests: parse typed modules, run a pass, compare with the
// expected module including spans (printing both with the first mismatch
// underlined on failure).
#pragma once

#include <gtest/gtest.h>

#include <string>
#include <string_view>

#include "engine/ir/expr_visitor.h"
#include "engine/ir/structural_equal.h"
#include "engine/op/type_inference.h"
#include "engine/parser/parser.h"
#include "engine/pass/pass.h"
#include "engine/pass/pass_config.h"
#include "engine/pass/pass_context.h"
#include "engine/printer/printer.h"

namespace kiln::testing {

// `text` parsed and typed (typing normalizes call attributes, so expected
// modules may leave defaults out, as the input does).
inline IRModule ParseTyped(std::string_view text) {
  absl::StatusOr<IRModule> parsed = ParseModule(text);
  EXPECT_TRUE(parsed.ok()) << parsed.status();
  if (!parsed.ok()) return nullptr;
  absl::StatusOr<IRModule> typed = InferType(*parsed);
  EXPECT_TRUE(typed.ok()) << typed.status();
  return typed.ok() ? *typed : nullptr;
}

inline IRModule RunPass(const Pass& pass, const IRModule& module) {
  if (!module) return nullptr;
  absl::StatusOr<IRModule> result = (*pass)(module);
  EXPECT_TRUE(result.ok()) << pass->info().name << ": " << result.status();
  return result.ok() ? *result : nullptr;
}

inline ::testing::AssertionResult EqualWithSpans(const IRModule& actual,
                                                 const IRModule& expected) {
  if (!actual || !expected) return ::testing::AssertionFailure() << "missing module";
  StructuralEqualOptions options;
  options.compare_spans = true;
  auto mismatch = FindFirstMismatch(actual, expected, options);
  if (!mismatch) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure()
         << "actual vs expected:\n"
         << RenderStructuralMismatch(actual, expected, *mismatch);
}

// Every call in `module` carries a span (the provenance property).
inline ::testing::AssertionResult AllCallsHaveSpans(const IRModule& module) {
  int missing = 0;
  for (const auto& entry : module->functions) {
    PostOrderVisit(entry.second, [&](const Expr& expr) {
      if (expr.as<CallNode>() && !expr->span) ++missing;
    });
  }
  if (missing == 0) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << missing << " calls without a span in\n"
                                       << PrintModule(module);
}

}  // namespace kiln::testing
