// CreateRewriterPass: a function pass from a PostOrderRewriter, so a pass that
// rewrites calls bottom-up is its rewriter plus a PassInfo, with the
// rewriter's first error returned as the pass's error.
#pragma once

#include <utility>

#include "engine/ir/expr_mutator.h"
#include "engine/pass/pass.h"
#include "engine/support/status_macros.h"

namespace kiln {

// `make_rewriter(func, module, context)` returns a fresh rewriter (any type
// derived from PostOrderRewriter) for each function `func` of the module (a
// rewriter may look at the whole function first, to count uses, say).
template <typename MakeRewriter>
Pass CreateRewriterPass(MakeRewriter make_rewriter, PassInfo info) {
  return CreateFunctionPass(
      [make_rewriter = std::move(make_rewriter)](
          const Function& func, const IRModule& module,
          PassContext& context) -> absl::StatusOr<Function> {
        auto rewriter = make_rewriter(func, module, context);
        KILN_ASSIGN_OR_RETURN(Expr result, rewriter.Rewrite(func));
        return Downcast<FunctionNode>(result);
      },
      std::move(info));
}

}  // namespace kiln
