// SpanCoverage: span counting and the strict check.
#include "engine/pass/span_coverage.h"

#include <cstdio>

#include "absl/strings/str_cat.h"
#include "engine/ir/expr_visitor.h"
#include "engine/printer/printer.h"

namespace kiln {
namespace {

bool Counted(const Expr& expr) {
  return expr->kind() != ObjectKind::kOp && expr->kind() != ObjectKind::kGlobalVar;
}

std::string Percent(int64_t part, int64_t whole) {
  char buffer[32];
  std::snprintf(
      buffer, sizeof(buffer), "%.1f%%",
      whole == 0 ? 100.0 : 100.0 * static_cast<double>(part) / static_cast<double>(whole));
  return buffer;
}

}  // namespace

SpanStats CountSpans(const IRModule& module) {
  SpanStats stats;
  // One visitor for the whole module: a node shared between functions counts once.
  struct Counter : ExprVisitor {
    explicit Counter(SpanStats* stats) : stats(stats) {}
    void VisitExpr_(const Expr& expr) override {
      if (Counted(expr)) {
        ++stats->nodes;
        if (expr->span) ++stats->nodes_with_span;
      }
      if (expr->kind() == ObjectKind::kCall) {
        ++stats->calls;
        if (expr->span) ++stats->calls_with_span;
      }
      ExprVisitor::VisitExpr_(expr);
    }
    SpanStats* stats;
  } counter(&stats);
  for (const auto& [name, function] : module->functions) {
    if (function->kind() == ObjectKind::kFunction) counter.VisitExpr(function);
  }
  return stats;
}

Expr FirstCallWithoutSpan(const IRModule& module) {
  for (const auto& [name, function] : module->functions) {
    if (function->kind() != ObjectKind::kFunction) continue;
    Expr found;
    PostOrderVisit(function, [&found](const Expr& expr) {
      if (!found && expr->kind() == ObjectKind::kCall && !expr->span) found = expr;
    });
    if (found) return found;
  }
  return nullptr;
}

SpanCoverage::SpanCoverage(bool strict) : PassInstrument("SpanCoverage"), strict_(strict) {}

absl::Status SpanCoverage::RunAfterPass(const IRModule& module, const PassInvocation& pass) {
  if (pass.pass.is_sequential()) return absl::OkStatus();
  SpanStats stats = CountSpans(module);
  results_.push_back(Result{pass.name(), pass.depth, stats});
  if (!strict_ || stats.calls_with_span == stats.calls) return absl::OkStatus();
  Expr sample = FirstCallWithoutSpan(module);
  return absl::InternalError(absl::StrCat("pass '", pass.name(), "' left ",
                                          stats.calls - stats.calls_with_span, " of ", stats.calls,
                                          " calls without a source span; the first:\n",
                                          PrintModuleWithUnderlines(module, {ObjectRef(sample)})));
}

std::string SpanCoverage::Render() const {
  std::string out;
  for (const Result& result : results_) {
    const SpanStats& s = result.stats;
    absl::StrAppend(&out, std::string(2 * result.depth, ' '), result.pass, ": calls ",
                    s.calls_with_span, "/", s.calls, " (", Percent(s.calls_with_span, s.calls),
                    "), nodes ", s.nodes_with_span, "/", s.nodes, " (",
                    Percent(s.nodes_with_span, s.nodes), ")\n");
  }
  return out;
}

}  // namespace kiln
