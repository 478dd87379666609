// DefuseOps: a post-order rewriter; each fused call is replaced by a copy of
// the body in which parameters read the (already defused) arguments.
#include "engine/transform/defuse_ops.h"

#include <unordered_map>

#include "engine/ir/expr_mutator.h"

namespace kiln::transform {
namespace {

// Rebuilds a fused body over the arguments. Iterative (ExprMutator), so a
// 256-node group costs no stack depth.
class ParamSubstituter : public ExprMutator {
 public:
  explicit ParamSubstituter(std::unordered_map<const ExprNode*, Expr> map) : map_(std::move(map)) {}

 protected:
  Expr VisitVar_(const VarNode* op) override {
    auto it = map_.find(op);
    return it == map_.end() ? Expr(op) : it->second;
  }

 private:
  std::unordered_map<const ExprNode*, Expr> map_;
};

class Defuser : public PostOrderRewriter {
 protected:
  Result Rewrite_(const CallNode* /*pre*/, const Expr& post) override {
    const auto* call = post.as<CallNode>();
    const auto* func = call->op.as<FunctionNode>();
    if (func == nullptr || !func->HasNonzeroAttr(kAttrPrimitive) ||
        func->params.size() != call->args.size()) {
      return post;
    }
    std::unordered_map<const ExprNode*, Expr> map;
    for (size_t i = 0; i < func->params.size(); ++i)
      map.emplace(func->params[i].get(), call->args[i]);
    ParamSubstituter substituter(std::move(map));
    return substituter.VisitExpr(func->body);
  }
};

}  // namespace

Pass DefuseOps() {
  return CreateFunctionPass(
      [](const Function& func, const IRModule&, PassContext&) -> absl::StatusOr<Function> {
        Defuser defuser;
        return Downcast<FunctionNode>(defuser.VisitExpr(func));
      },
      PassInfo{"DefuseOps", 0, {}, PassStage::kGraph});
}

}  // namespace kiln::transform
