// ToGraphNormalForm: let variables substituted by their (rewritten) values.
//
// Order matters for the stack: substituting a variable needs its value
// rewritten first, and rewriting it on demand from the variable's use would
// recurse once per link of a let chain. So the bindings are first listed in
// an order where each value comes after every binding it can see (an
// in-order walk: a let's value, then the let, then its body), and the values
// are rewritten in that order; a use then only looks its variable up.
#include "engine/transform/to_graph_normal_form.h"

#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "engine/ir/expr_mutator.h"
#include "engine/ir/expr_walk.h"

namespace kiln::transform {
namespace {

// The lets under `root` in binding order (value before let before body):
// a let is listed when the walk reaches its body.
std::vector<const LetNode*> BindingOrder(const Expr& root) {
  std::vector<const LetNode*> order;
  std::unordered_set<const ExprNode*> visited{root.get()};
  WalkPostOrder(
      root.get(), ChildSet::kAll,
      [&](const WalkEdge& edge) {
        if (edge.role == ChildRole::kLetBody) {
          order.push_back(static_cast<const LetNode*>(edge.parent));
        }
        return visited.insert(edge.child).second;
      },
      [](const ExprNode*) {});
  return order;
}

class LetSubstituter : public ExprMutator {
 public:
  Expr Run(const Expr& root) {
    for (const LetNode* let : BindingOrder(root)) {
      values_[let->var.get()] = VisitExpr(let->value);
    }
    return VisitExpr(root);
  }

 protected:
  Expr VisitVar_(const VarNode* op) override {
    auto it = values_.find(op);
    return it == values_.end() ? Expr(op) : it->second;
  }
  Expr VisitLet_(const LetNode* op) override { return VisitExpr(op->body); }

 private:
  std::unordered_map<const VarNode*, Expr> values_;
};

}  // namespace

Pass ToGraphNormalForm() {
  return CreateFunctionPass(
      [](const Function& func, const IRModule&, PassContext&) -> absl::StatusOr<Function> {
        LetSubstituter substituter;
        return Downcast<FunctionNode>(substituter.Run(func));
      },
      PassInfo{"ToGraphNormalForm", 0, {}, PassStage::kGraph});
}

}  // namespace kiln::transform
