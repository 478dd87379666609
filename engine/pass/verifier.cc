// Verifier: scope walk for well-formedness, type re-inference on a copy.
#include "engine/pass/verifier.h"

#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "absl/strings/str_cat.h"
#include "engine/ir/expr_mutator.h"
#include "engine/ir/expr_visitor.h"
#include "engine/ir/structural_equal.h"
#include "engine/printer/printer.h"
#include "engine/support/status_macros.h"

namespace kiln {
namespace {

absl::Status NodeError(const IRModule& module, const ObjectRef& node, std::string_view message) {
  return absl::InvalidArgumentError(
      absl::StrCat(std::string(message), "\n", PrintModuleWithUnderlines(module, {node})));
}

// Walks a function with an explicit stack of visit / bind / unbind steps, so
// scopes are exact and a 20,000-node chain costs no native stack.
class ScopeChecker {
 public:
  explicit ScopeChecker(const IRModule& module) : module_(module) {}

  absl::Status Check(const Expr& function) {
    work_.push_back({Step::kVisit, function.get()});
    while (!work_.empty()) {
      Item item = work_.back();
      work_.pop_back();
      switch (item.step) {
        case Step::kBind: {
          const auto* var = static_cast<const VarNode*>(item.node);
          if (!bound_ever_.insert(var).second) {
            return NodeError(module_, Expr(var),
                             absl::StrCat("variable %", var->name_hint, " is bound twice"));
          }
          ++in_scope_[var];
          break;
        }
        case Step::kUnbind:
          --in_scope_[static_cast<const VarNode*>(item.node)];
          break;
        case Step::kVisit:
          KILN_RETURN_IF_ERROR(Visit(item.node));
          break;
      }
    }
    return absl::OkStatus();
  }

 private:
  enum class Step { kVisit, kBind, kUnbind };
  struct Item {
    Step step;
    const ExprNode* node;
  };

  void Push(Step step, const ExprNode* node) {
    if (node != nullptr) work_.push_back({step, node});
  }

  absl::Status Visit(const ExprNode* node) {
    if (node->kind() == ObjectKind::kVar) {
      // Every use is checked (uses are not memoized: the same variable node
      // may appear inside and outside its scope).
      const auto* var = static_cast<const VarNode*>(node);
      auto it = in_scope_.find(var);
      if (it == in_scope_.end() || it->second == 0) {
        return NodeError(module_, Expr(var),
                         absl::StrCat("variable %", var->name_hint,
                                      bound_ever_.count(var) ? " is used outside its scope"
                                                             : " is used but never bound"));
      }
      return absl::OkStatus();
    }
    if (!visited_.insert(node).second) return absl::OkStatus();
    // Children are pushed in reverse so they are visited in evaluation order.
    switch (node->kind()) {
      case ObjectKind::kGlobalVar: {
        const auto* global = static_cast<const GlobalVarNode*>(node);
        if (!module_->Lookup(global->name_hint)) {
          return NodeError(module_, Expr(node),
                           absl::StrCat("@", global->name_hint, " is not defined in the module"));
        }
        break;
      }
      case ObjectKind::kCall: {
        const auto* call = static_cast<const CallNode*>(node);
        for (auto it = call->args.rbegin(); it != call->args.rend(); ++it) {
          Push(Step::kVisit, it->get());
        }
        Push(Step::kVisit, call->op.get());
        break;
      }
      case ObjectKind::kTuple: {
        const auto* tuple = static_cast<const TupleNode*>(node);
        for (auto it = tuple->elements.rbegin(); it != tuple->elements.rend(); ++it) {
          Push(Step::kVisit, it->get());
        }
        break;
      }
      case ObjectKind::kTupleGetItem:
        Push(Step::kVisit, static_cast<const TupleGetItemNode*>(node)->tuple.get());
        break;
      case ObjectKind::kLet: {
        const auto* let = static_cast<const LetNode*>(node);
        // A let-bound function may call itself (recursion), so its variable is
        // in scope in its value; any other value is checked before the bind.
        bool recursive = let->value && let->value->kind() == ObjectKind::kFunction;
        Push(Step::kUnbind, let->var.get());
        Push(Step::kVisit, let->body.get());
        if (!recursive) Push(Step::kBind, let->var.get());
        Push(Step::kVisit, let->value.get());
        if (recursive) Push(Step::kBind, let->var.get());
        break;
      }
      case ObjectKind::kIf: {
        const auto* branch = static_cast<const IfNode*>(node);
        Push(Step::kVisit, branch->false_branch.get());
        Push(Step::kVisit, branch->true_branch.get());
        Push(Step::kVisit, branch->cond.get());
        break;
      }
      case ObjectKind::kFunction: {
        const auto* function = static_cast<const FunctionNode*>(node);
        for (const Var& param : function->params) Push(Step::kUnbind, param.get());
        Push(Step::kVisit, function->body.get());
        for (auto it = function->params.rbegin(); it != function->params.rend(); ++it) {
          Push(Step::kBind, it->get());
        }
        break;
      }
      default:
        break;
    }
    return absl::OkStatus();
  }

  const IRModule& module_;
  std::vector<Item> work_;
  std::unordered_set<const ExprNode*> visited_;
  std::unordered_set<const VarNode*> bound_ever_;
  std::unordered_map<const VarNode*, int> in_scope_;
};

// A copy with every checked type removed (variables are replaced
// consistently, since the mutator memoizes them), for re-inference from
// scratch: InferType stops at nodes that already carry a type.
class TypeStripper : public ExprMutator {
 protected:
  Expr VisitExpr_(const Expr& expr) override {
    Expr rebuilt = ExprMutator::VisitExpr_(expr);
    if (!rebuilt->checked_type || rebuilt->kind() == ObjectKind::kOp) return rebuilt;
    return WithCheckedType(rebuilt, nullptr);
  }
};

std::vector<Expr> PostOrder(const Expr& expr) {
  std::vector<Expr> nodes;
  PostOrderVisit(expr, [&nodes](const Expr& node) { nodes.push_back(node); });
  return nodes;
}

absl::Status CheckTypes(const IRModule& module, const ModuleTypeInference& infer_types) {
  std::vector<IRModuleNode::Entry> stripped;
  TypeStripper stripper;
  for (const auto& [name, function] : module->functions) {
    // Loop PrimFuncs have no graph types: InferType keeps them as they are.
    if (function->kind() != ObjectKind::kFunction) {
      stripped.emplace_back(name, function);
      continue;
    }
    stripped.emplace_back(name, Downcast<BaseFuncNode>(stripper.VisitExpr(function)));
  }
  absl::StatusOr<IRModule> inferred = infer_types(MakeModule(std::move(stripped), module->attrs));
  if (!inferred.ok()) {
    return absl::InvalidArgumentError(absl::StrCat("the module no longer type-checks: ",
                                                   std::string(inferred.status().message())));
  }
  for (size_t f = 0; f < module->functions.size(); ++f) {
    if (module->functions[f].second->kind() != ObjectKind::kFunction) continue;
    std::vector<Expr> original = PostOrder(module->functions[f].second);
    std::vector<Expr> fresh = PostOrder((*inferred)->functions[f].second);
    if (original.size() != fresh.size()) {
      return absl::InternalError(absl::StrCat("re-inferring types of @",
                                              module->functions[f].first->name_hint,
                                              " changed its shape; cannot compare types"));
    }
    for (size_t i = 0; i < original.size(); ++i) {
      const Type& stale = original[i]->checked_type;
      if (!stale) continue;  // not typed yet: the next InferType will type it
      const Type& expected = fresh[i]->checked_type;
      if (!StructuralEqual(stale, expected)) {
        return NodeError(module, original[i],
                         absl::StrCat("a node's checked type is ", PrintType(stale),
                                      " but re-inference gives ", PrintType(expected)));
      }
    }
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status VerifyModule(const IRModule& module, const VerifierOptions& options) {
  for (const auto& [name, function] : module->functions) {
    if (function->kind() != ObjectKind::kFunction) continue;
    KILN_RETURN_IF_ERROR(ScopeChecker(module).Check(function));
  }
  if (options.infer_types) return CheckTypes(module, options.infer_types);
  return absl::OkStatus();
}

Verifier::Verifier(VerifierOptions options) : PassInstrument("Verifier"), options_(options) {}

absl::Status Verifier::RunAfterPass(const IRModule& module, const PassInvocation& pass) {
  if (pass.pass.is_sequential()) return absl::OkStatus();
  absl::Status status = VerifyModule(module, options_);
  if (status.ok()) return status;
  return absl::InternalError(absl::StrCat(
      "pass '", pass.name(), "' produced invalid IR: ", std::string(status.message())));
}

}  // namespace kiln
