// DeadCodeElimination: a liveness walk from the function's result, then a
// rebuild that drops dead bindings.
//
// Liveness is found backwards through each let chain: the body of the chain
// first, then the bindings from the innermost out, so a binding used only by
// a dead binding is found dead in the same walk (no fixpoint iteration, which
// would cost one run per link of a dead chain).
#include "engine/transform/dead_code_elimination.h"

#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "engine/ir/expr_functor.h"
#include "engine/ir/expr_mutator.h"
#include "engine/ir/expr_visitor.h"
#include "engine/ir/expr_walk.h"
#include "engine/op/op_registry.h"

namespace kiln::transform {
namespace {

// Whether evaluating each node may have an effect: a call of a stateful
// operator, or of anything but an operator (a function may contain one),
// anywhere below it. Computed once per node, bottom-up.
class EffectAnalysis : public ExprVisitor {
 public:
  bool HasEffect(const ExprNode* node) const {
    auto it = effect_.find(node);
    return it != effect_.end() && it->second;
  }

 protected:
  void VisitExpr_(const Expr& expr) override {
    ExprVisitor::VisitExpr_(expr);
    bool effect = false;
    if (const auto* call = expr.as<CallNode>()) {
      const auto* op = call->op.as<OpNode>();
      if (op == nullptr) {
        effect = true;
      } else {
        const OpEntry* entry = OpRegistry::Global().FindCallee(call->op);
        effect = entry == nullptr || entry->stateful;
      }
    }
    // A function value has no effect until called; its body's effects count
    // at the call (covered above: calls of non-operators count as effects).
    if (expr->kind() != ObjectKind::kFunction) {
      ForEachChild(expr.get(), ChildSet::kAll,
                   [&](const ExprNode* child) { effect = effect || HasEffect(child); });
    }
    effect_[expr.get()] = effect;
  }

 private:
  std::unordered_map<const ExprNode*, bool> effect_;
};

// The variables used by live code, found from the root with an explicit stack.
class Liveness {
 public:
  explicit Liveness(const EffectAnalysis& effects) : effects_(effects) {}

  void Run(const Expr& root) {
    Push(root.get());
    while (!stack_.empty()) {
      Frame& frame = stack_.back();
      if (frame.chain.empty()) {
        const ExprNode* node = frame.node;
        stack_.pop_back();
        Expand(node);
        continue;
      }
      // A let chain whose body is done: its bindings from the innermost out.
      if (frame.next == 0) {
        stack_.pop_back();
        continue;
      }
      const LetNode* let = frame.chain[--frame.next];
      if (live_.count(let->var.get()) || effects_.HasEffect(let->value.get())) {
        live_.insert(let->var.get());
        // Pushed above the chain's frame: the value is finished (and marks
        // the variables it uses) before the next outer binding is decided.
        Push(let->value.get());
      }
    }
  }

  bool IsLive(const VarNode* var) const { return live_.count(var) > 0; }

 private:
  struct Frame {
    const ExprNode* node;
    std::vector<const LetNode*> chain;
    size_t next = 0;
  };

  void Push(const ExprNode* node) {
    if (node != nullptr && visited_.insert(node).second) stack_.push_back({node, {}, 0});
  }

  void Expand(const ExprNode* node) {
    if (node->kind() == ObjectKind::kVar) {
      live_.insert(static_cast<const VarNode*>(node));
      return;
    }
    if (node->kind() != ObjectKind::kLet) {
      ForEachChild(node, ChildSet::kAll, [&](const ExprNode* child) { Push(child); });
      return;
    }
    Frame chain_frame{node, {}, 0};
    const ExprNode* body = node;
    while (body->kind() == ObjectKind::kLet) {
      visited_.insert(body);
      chain_frame.chain.push_back(static_cast<const LetNode*>(body));
      body = static_cast<const LetNode*>(body)->body.get();
    }
    chain_frame.next = chain_frame.chain.size();
    stack_.push_back(std::move(chain_frame));
    Push(body);
  }

  const EffectAnalysis& effects_;
  std::vector<Frame> stack_;
  std::unordered_set<const ExprNode*> visited_;
  std::unordered_set<const VarNode*> live_;
};

class DeadBindingRemover : public ExprMutator {
 public:
  explicit DeadBindingRemover(const Liveness& liveness) : liveness_(liveness) {}

 protected:
  Expr VisitLet_(const LetNode* op) override {
    if (!liveness_.IsLive(op->var.get())) return VisitExpr(op->body);
    return ExprMutator::VisitLet_(op);
  }

 private:
  const Liveness& liveness_;
};

}  // namespace

Pass DeadCodeElimination() {
  return CreateFunctionPass(
      [](const Function& func, const IRModule&, PassContext&) -> absl::StatusOr<Function> {
        EffectAnalysis effects;
        effects.VisitExpr(func);
        Liveness liveness(effects);
        liveness.Run(func);
        DeadBindingRemover remover(liveness);
        return Downcast<FunctionNode>(remover.VisitExpr(func));
      },
      PassInfo{"DeadCodeElimination", 1, {}, PassStage::kGraph});
}

}  // namespace kiln::transform
