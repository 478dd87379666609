// ToANormalForm: scope placement, then a rebuild as let chains.
//
// 1. A post-order list of the function's nodes (not entering nested
//    functions). Walking it backwards visits every user before its operands,
//    so when a node is reached the scopes of all its uses are known and its
//    own scope is their lowest common ancestor. An if opens one scope per
//    branch, a let one for its body: a node used only there is bound there.
// 2. Each scope becomes `let %v = node; ...; result` with its nodes in
//    post-order (operands first). A let in tail position continues the chain
//    of its scope instead of becoming a nested block; that chain is built from
//    the innermost scope outwards, so long let chains cost no stack depth.
#include "engine/transform/to_a_normal_form.h"

#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "engine/ir/expr_visitor.h"
#include "engine/ir/expr_walk.h"

namespace kiln::transform {
namespace {

bool IsAtom(const ExprNode* node) {
  switch (node->kind()) {
    case ObjectKind::kVar:
    case ObjectKind::kGlobalVar:
    case ObjectKind::kConstant:
    case ObjectKind::kOp:
      return true;
    default:
      return false;
  }
}

Expr ConvertFunction(const Function& func);

class Converter {
 public:
  explicit Converter(const Function& func) : func_(func) {}

  Expr Run() {
    Order();
    Place();
    for (const ExprNode* node : order_) {
      if (!IsAtom(node) && !tail_lets_.count(node)) scopes_[scope_of_.at(node)].nodes.push_back(node);
    }
    Expr body = BuildScope(0);
    return MakeRef<FunctionNode>(func_->params, body, func_->ret_type, func_->attrs, func_->fields());
  }

 private:
  struct Scope {
    int parent;
    int depth;
    const ExprNode* result;
    std::vector<const ExprNode*> nodes;
  };

  // Post-order of the body, nested functions as leaves.
  class OrderVisitor : public ExprVisitor {
   public:
    explicit OrderVisitor(std::vector<const ExprNode*>* order) : order_(order) {}

   protected:
    void VisitFunction_(const FunctionNode*) override {}
    void VisitExpr_(const Expr& expr) override {
      ExprVisitor::VisitExpr_(expr);
      order_->push_back(expr.get());
    }

   private:
    std::vector<const ExprNode*>* order_;
  };

  void Order() {
    OrderVisitor visitor(&order_);
    visitor.VisitExpr(func_->body);
  }

  int NewScope(int parent, const ExprNode* result) {
    int depth = parent < 0 ? 0 : scopes_[parent].depth + 1;
    scopes_.push_back({parent, depth, result, {}});
    return static_cast<int>(scopes_.size()) - 1;
  }

  int Lca(int a, int b) const {
    while (scopes_[a].depth > scopes_[b].depth) a = scopes_[a].parent;
    while (scopes_[b].depth > scopes_[a].depth) b = scopes_[b].parent;
    while (a != b) {
      a = scopes_[a].parent;
      b = scopes_[b].parent;
    }
    return a;
  }

  void Use(const ExprNode* child, int scope) {
    auto [it, inserted] = scope_of_.emplace(child, scope);
    if (!inserted) it->second = Lca(it->second, scope);
    ++uses_[child];
  }

  void Place() {
    NewScope(-1, func_->body.get());
    Use(func_->body.get(), 0);
    for (auto it = order_.rbegin(); it != order_.rend(); ++it) {
      const ExprNode* node = *it;
      int scope = scope_of_.at(node);
      switch (node->kind()) {
        case ObjectKind::kIf: {
          const auto* n = static_cast<const IfNode*>(node);
          Use(n->cond.get(), scope);
          int then_scope = NewScope(scope, n->true_branch.get());
          int else_scope = NewScope(scope, n->false_branch.get());
          branch_scopes_[node] = {then_scope, else_scope};
          Use(n->true_branch.get(), then_scope);
          Use(n->false_branch.get(), else_scope);
          break;
        }
        case ObjectKind::kLet: {
          const auto* n = static_cast<const LetNode*>(node);
          Use(n->value.get(), scope);
          int body_scope = NewScope(scope, n->body.get());
          branch_scopes_[node] = {body_scope, -1};
          Use(n->body.get(), body_scope);
          break;
        }
        case ObjectKind::kFunction:
          break;  // converted on its own
        default:
          ForEachChild(node, ChildSet::kAll, [&](const ExprNode* child) { Use(child, scope); });
      }
    }
    // A let's value used by nothing else is bound to the let's own variable,
    // so code already in A-normal form comes back as it was.
    for (const ExprNode* node : order_) {
      if (node->kind() != ObjectKind::kLet) continue;
      const auto* let = static_cast<const LetNode*>(node);
      const ExprNode* value = let->value.get();
      if (!IsAtom(value) && uses_.at(value) == 1 && scope_of_.at(value) == scope_of_.at(node)) {
        let_bound_.emplace(value, let);
      }
    }
    // A let that is the result of its scope and used nowhere else continues
    // that scope's chain (no binding, no nested block).
    for (size_t s = 0; s < scopes_.size(); ++s) {
      const ExprNode* result = scopes_[s].result;
      if (result->kind() == ObjectKind::kLet && uses_.at(result) == 1 &&
          scope_of_.at(result) == static_cast<int>(s)) {
        tail_lets_.insert(result);
      }
    }
  }

  Expr Atom(const Expr& expr) const {
    if (IsAtom(expr.get())) return expr;
    auto it = bound_.find(expr.get());
    KILN_CHECK(it != bound_.end()) << "ToANormalForm: operand used before it was bound";
    return it->second;
  }

  // The node with operands replaced by atoms (sub-scopes built recursively:
  // nesting depth of ifs and let blocks, not graph size).
  Expr Rebuild(const ExprNode* node) {
    switch (node->kind()) {
      case ObjectKind::kCall: {
        const auto* n = static_cast<const CallNode*>(node);
        std::vector<Expr> args;
        for (const Expr& arg : n->args) args.push_back(Atom(arg));
        return MakeRef<CallNode>(Atom(n->op), std::move(args), n->attrs, n->fields());
      }
      case ObjectKind::kTuple: {
        std::vector<Expr> elements;
        for (const Expr& e : static_cast<const TupleNode*>(node)->elements) {
          elements.push_back(Atom(e));
        }
        return MakeRef<TupleNode>(std::move(elements), node->fields());
      }
      case ObjectKind::kTupleGetItem: {
        const auto* n = static_cast<const TupleGetItemNode*>(node);
        return MakeRef<TupleGetItemNode>(Atom(n->tuple), n->index, n->fields());
      }
      case ObjectKind::kIf: {
        const auto* n = static_cast<const IfNode*>(node);
        auto [then_scope, else_scope] = branch_scopes_.at(node);
        return MakeRef<IfNode>(Atom(n->cond), BuildScope(then_scope), BuildScope(else_scope),
                               n->fields());
      }
      case ObjectKind::kLet: {
        const auto* n = static_cast<const LetNode*>(node);
        Expr body = BuildScope(branch_scopes_.at(node).first);
        // The value was bound to the let's variable where it was computed.
        if (let_bound_.count(n->value.get())) return body;
        return MakeRef<LetNode>(n->var, Atom(n->value), std::move(body), n->fields());
      }
      case ObjectKind::kFunction: {
        Function func(static_cast<const FunctionNode*>(node));
        if (func->HasNonzeroAttr(kAttrPrimitive)) return func;
        return ConvertFunction(func);
      }
      default:
        KILN_UNREACHABLE() << ObjectKindName(node->kind());
        return Expr(node);
    }
  }

  struct Binding {
    Var var;
    Expr value;
    const LetNode* original;  // the let whose variable is reused, if any
  };

  // Binds the nodes of `scope` (creating their variables) and returns the
  // bindings in order.
  std::vector<Binding> Bind(int scope) {
    std::vector<Binding> bindings;
    for (const ExprNode* node : scopes_[scope].nodes) {
      Expr value = Rebuild(node);
      Type type = node->checked_type;
      auto let = let_bound_.find(node);
      const LetNode* original = let != let_bound_.end() ? let->second : nullptr;
      Var var = original != nullptr ? original->var
                                    : MakeRef<VarNode>("v" + std::to_string(next_var_++), type,
                                                       ExprFields{nullptr, type, nullptr});
      bound_.emplace(node, var);
      bindings.push_back({var, std::move(value), original});
    }
    return bindings;
  }

  static Expr Wrap(std::vector<Binding> bindings, Expr result) {
    for (auto it = bindings.rbegin(); it != bindings.rend(); ++it) {
      // A reused let keeps its span and device; a new one takes the span of
      // the value it binds, so every new node leads back to a source.
      ExprFields fields = it->original ? it->original->fields() : ExprFields{it->value->span, nullptr, nullptr};
      fields.checked_type = result->checked_type;
      result = MakeRef<LetNode>(it->var, std::move(it->value), std::move(result),
                                std::move(fields));
    }
    return result;
  }

  Expr BuildScope(int scope) {
    // The chain of scopes linked by tail lets, outermost first. Bindings are
    // made outermost first (inner scopes use outer variables), the let
    // chain is assembled innermost first.
    struct Link {
      std::vector<Binding> bindings;
      const LetNode* tail_let;
    };
    std::vector<Link> chain;
    int current = scope;
    while (true) {
      Link link{Bind(current), nullptr};
      const ExprNode* result = scopes_[current].result;
      if (!tail_lets_.count(result)) {
        chain.push_back(std::move(link));
        break;
      }
      link.tail_let = static_cast<const LetNode*>(result);
      chain.push_back(std::move(link));
      current = branch_scopes_.at(result).first;
    }
    Expr expr = Atom(Expr(scopes_[current].result));
    for (auto it = chain.rbegin(); it != chain.rend(); ++it) {
      const LetNode* let = it->tail_let;
      if (let != nullptr && !let_bound_.count(let->value.get())) {
        expr = MakeRef<LetNode>(let->var, Atom(let->value), std::move(expr), let->fields());
      }
      expr = Wrap(std::move(it->bindings), std::move(expr));
    }
    return expr;
  }

  const Function& func_;
  std::vector<const ExprNode*> order_;
  std::vector<Scope> scopes_;
  std::unordered_map<const ExprNode*, int> scope_of_;
  std::unordered_map<const ExprNode*, int> uses_;
  std::unordered_map<const ExprNode*, std::pair<int, int>> branch_scopes_;
  std::unordered_set<const ExprNode*> tail_lets_;
  std::unordered_map<const ExprNode*, Expr> bound_;
  std::unordered_map<const ExprNode*, const LetNode*> let_bound_;
  int next_var_ = 0;
};

Expr ConvertFunction(const Function& func) { return Converter(func).Run(); }

}  // namespace

Pass ToANormalForm() {
  return CreateFunctionPass(
      [](const Function& func, const IRModule&, PassContext&) -> absl::StatusOr<Function> {
        return Downcast<FunctionNode>(ConvertFunction(func));
      },
      PassInfo{"ToANormalForm", 0, {}, PassStage::kGraph});
}

}  // namespace kiln::transform
