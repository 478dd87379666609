// Inline: expansion of calls of Inline-marked global functions.
#include "engine/transform/inline.h"

#include <map>
#include <set>
#include <string>
#include <unordered_map>
#include <vector>

#include "engine/ir/expr_mutator.h"
#include "engine/ir/expr_visitor.h"
#include "engine/support/request_limits.h"
#include "engine/transform/si_builder.h"

namespace kiln::transform {
namespace {

bool MarkedInline(const BaseFunc& func) {
  const auto* f = func.as<FunctionNode>();
  return f != nullptr && f->HasNonzeroAttr(kAttrInline) && !f->HasNonzeroAttr(kAttrPrimitive);
}

// One copy of a function body: parameters become the call's arguments, every
// other variable (let-bound, or a nested function's parameter) a fresh Var,
// and every node of the copy records the call site after its own span, as
// MLIR's inliner wraps locations in a CallSiteLoc: two inlined copies of one
// function stay distinguishable, and each leads back to its call.
class BodyCopier : public ExprMutator {
 public:
  BodyCopier(const FunctionNode& func, const std::vector<Expr>& args, Span call_span,
             bool add_call_site)
      : call_span_(std::move(call_span)), add_call_site_(add_call_site) {
    for (size_t i = 0; i < func.params.size(); ++i) args_[func.params[i].get()] = args[i];
  }

 protected:
  Expr VisitExpr_(const Expr& expr) override {
    Expr post = ExprMutator::VisitExpr_(expr);
    // By the original's kind: a parameter's replacement is the caller's
    // argument, which is not part of the copy.
    ObjectKind kind = expr->kind();
    if (!add_call_site_ || !call_span_ || kind == ObjectKind::kVar ||
        kind == ObjectKind::kGlobalVar || kind == ObjectKind::kOp) {
      return post;
    }
    return WithSpan(post, MakeSequentialSpan({post->span, call_span_}));
  }

  Expr VisitVar_(const VarNode* op) override {
    auto it = args_.find(op);
    if (it != args_.end()) return it->second;
    // Memoized by ExprMutator: every use of the variable gets the same copy.
    return MakeRef<VarNode>(op->name_hint, op->type_annotation, op->fields());
  }

 private:
  std::unordered_map<const VarNode*, Expr> args_;
  Span call_span_;
  bool add_call_site_;
};

class Inliner {
 public:
  explicit Inliner(const IRModule& module) : module_(module) {}

  // `func` with every inlinable call expanded.
  BaseFunc Expand(const GlobalVar& name, const BaseFunc& func) {
    // Loop PrimFuncs hold no graph calls to expand.
    if (func->kind() != ObjectKind::kFunction) return func;
    auto done = expanded_.find(name->name_hint);
    if (done != expanded_.end()) return done->second;
    // Each level of a chain of inlined functions is a level of recursion
    // here: past the limit, calls are left as calls.
    if (in_progress_.size() >= static_cast<size_t>(kMaxInlineNesting)) return func;
    in_progress_.insert(name->name_hint);
    CallExpander expander(this);
    BaseFunc result = Downcast<BaseFuncNode>(expander.VisitExpr(func));
    in_progress_.erase(name->name_hint);
    expanded_[name->name_hint] = result;
    return result;
  }

  bool inlined_any() const { return inlined_any_; }

 private:
  class CallExpander : public PostOrderRewriter {
   public:
    explicit CallExpander(Inliner* owner) : owner_(owner) {}

   protected:
    Result Rewrite_(const CallNode* /*pre*/, const Expr& post) override {
      const auto* call = post.as<CallNode>();
      const auto* gv = call->op.as<GlobalVarNode>();
      if (gv == nullptr) return post;
      BaseFunc callee = owner_->module_->Lookup(gv->name_hint);
      // Recursion through inlined calls: leave this call as it is.
      if (!MarkedInline(callee) || owner_->in_progress_.count(gv->name_hint)) return post;
      const auto* func = owner_->ExpandedFunction(call->op, callee);
      if (func == nullptr || func->params.size() != call->args.size()) return post;
      owner_->inlined_any_ = true;
      BodyCopier copier(*func, call->args, call->span, SIBuilder::EnabledInCurrentContext());
      return copier.VisitExpr(func->body);
    }

   private:
    Inliner* owner_;
  };

  const FunctionNode* ExpandedFunction(const Expr& gv, const BaseFunc& callee) {
    BaseFunc expanded = Expand(Downcast<GlobalVarNode>(gv), callee);
    // Keep the expansion alive: the copier reads from it.
    keep_.push_back(expanded);
    return expanded.as<FunctionNode>();
  }

  const IRModule& module_;
  std::map<std::string, BaseFunc> expanded_;
  std::set<std::string> in_progress_;
  std::vector<BaseFunc> keep_;
  bool inlined_any_ = false;
};

IRModule InlineModule(const IRModule& module) {
  Inliner inliner(module);
  std::vector<IRModuleNode::Entry> functions;
  for (const auto& [name, func] : module->functions) {
    functions.emplace_back(name, inliner.Expand(name, func));
  }
  if (!inliner.inlined_any()) return module;
  // Marked functions nobody calls anymore were only there to be inlined.
  std::set<std::string> called;
  for (const auto& entry : functions) {
    if (entry.second->kind() != ObjectKind::kFunction) continue;
    PostOrderVisit(entry.second, [&](const Expr& expr) {
      if (const auto* gv = expr.as<GlobalVarNode>()) called.insert(gv->name_hint);
    });
  }
  std::vector<IRModuleNode::Entry> kept;
  for (auto& entry : functions) {
    if (MarkedInline(entry.second) && entry.first->name_hint != "main" &&
        !called.count(entry.first->name_hint)) {
      continue;
    }
    kept.push_back(std::move(entry));
  }
  return MakeModule(std::move(kept), module->attrs);
}

}  // namespace

Pass Inline() {
  return CreateModulePass(
      [](const IRModule& module, PassContext&) -> absl::StatusOr<IRModule> {
        return InlineModule(module);
      },
      PassInfo{"Inline", 1, {}, PassStage::kGraph});
}

}  // namespace kiln::transform
