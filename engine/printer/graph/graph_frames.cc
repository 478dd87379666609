// Use counting and metadata numbering for the graph dialect's frames.
#include "engine/printer/graph/graph_frames.h"

#include "engine/ir/expr_visitor.h"
#include "engine/printer/graph/graph_builders.h"

namespace kiln::printer::graph {

namespace {

// Every edge that uses a value: variable definitions (parameters, let variables) are not uses.
template <typename Fn>
void ForEachUse(const ExprNode* expr, Fn&& fn) {
  switch (expr->kind()) {
    case ObjectKind::kCall: {
      const auto* call = static_cast<const CallNode*>(expr);
      fn(call->op.get());
      for (const Expr& arg : call->args) fn(arg.get());
      break;
    }
    case ObjectKind::kTuple:
      for (const Expr& element : static_cast<const TupleNode*>(expr)->elements) fn(element.get());
      break;
    case ObjectKind::kTupleGetItem:
      fn(static_cast<const TupleGetItemNode*>(expr)->tuple.get());
      break;
    case ObjectKind::kLet: {
      const auto* let = static_cast<const LetNode*>(expr);
      fn(let->value.get());
      fn(let->body.get());
      break;
    }
    case ObjectKind::kIf: {
      const auto* node = static_cast<const IfNode*>(expr);
      fn(node->cond.get());
      fn(node->true_branch.get());
      fn(node->false_branch.get());
      break;
    }
    case ObjectKind::kFunction:
      fn(static_cast<const FunctionNode*>(expr)->body.get());
      break;
    default:
      break;
  }
}

}  // namespace

int GraphModuleFrame::MetadataIndex(const Constant& constant) {
  auto [it, inserted] = metadata_index_.emplace(constant.get(), static_cast<int>(metadata_.size()));
  if (inserted) metadata_.push_back(constant);
  return it->second;
}

GraphFunctionFrame::GraphFunctionFrame(const Expr& root) : Frame(/*is_name_scope=*/true) {
  PostOrderVisit(root, [this](const Expr& expr) {
    ForEachUse(expr.get(), [this](const ExprNode* child) {
      if (child != nullptr && !IsAtomic(child)) ++use_counts_[child];
    });
  });
}

}  // namespace kiln::printer::graph
