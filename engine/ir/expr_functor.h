// ExprFunctor: dispatch on the kind of a graph expression through a per-
// instantiation table of thunks (one indexed load and an indirect call, no
// dynamic_cast chains). ExprVisitor and ExprMutator build on it.
#pragma once

#include <array>
#include <functional>
#include <utility>

#include "engine/ir/expr.h"

namespace kiln {

template <typename FType>
class ExprFunctor;

template <typename R, typename... Args>
class ExprFunctor<R(const Expr&, Args...)> {
 public:
  virtual ~ExprFunctor() = default;

  R operator()(const Expr& expr, Args... args) { return VisitExpr(expr, args...); }

  virtual R VisitExpr(const Expr& expr, Args... args) { return Dispatch(expr, args...); }

  virtual R VisitVar_(const VarNode* op, Args... args) { return VisitExprDefault_(op, args...); }
  virtual R VisitGlobalVar_(const GlobalVarNode* op, Args... args) {
    return VisitExprDefault_(op, args...);
  }
  virtual R VisitConstant_(const ConstantNode* op, Args... args) {
    return VisitExprDefault_(op, args...);
  }
  virtual R VisitOp_(const OpNode* op, Args... args) { return VisitExprDefault_(op, args...); }
  virtual R VisitCall_(const CallNode* op, Args... args) { return VisitExprDefault_(op, args...); }
  virtual R VisitTuple_(const TupleNode* op, Args... args) {
    return VisitExprDefault_(op, args...);
  }
  virtual R VisitTupleGetItem_(const TupleGetItemNode* op, Args... args) {
    return VisitExprDefault_(op, args...);
  }
  virtual R VisitLet_(const LetNode* op, Args... args) { return VisitExprDefault_(op, args...); }
  virtual R VisitIf_(const IfNode* op, Args... args) { return VisitExprDefault_(op, args...); }
  virtual R VisitFunction_(const FunctionNode* op, Args... args) {
    return VisitExprDefault_(op, args...);
  }
  virtual R VisitExprDefault_(const ExprNode* op, Args...) {
    KILN_UNREACHABLE() << "no visitor for " << ObjectKindName(op->kind());
    return R();
  }

 protected:
  // Calls the Visit*_ method for the kind of `expr`.
  R Dispatch(const Expr& expr, Args... args) {
    KILN_CHECK(expr.defined()) << "visiting a null expression";
    Thunk thunk = Table()[static_cast<size_t>(expr->kind())];
    KILN_CHECK(thunk != nullptr) << "not an expression: " << ObjectKindName(expr->kind());
    return thunk(this, expr.get(), std::forward<Args>(args)...);
  }

 private:
  using Thunk = R (*)(ExprFunctor*, const ExprNode*, Args...);
  static constexpr size_t kTableSize = static_cast<size_t>(ObjectKind::kNumKinds);

  template <typename Node, R (ExprFunctor::*Method)(const Node*, Args...)>
  static R Call(ExprFunctor* self, const ExprNode* node, Args... args) {
    return (self->*Method)(static_cast<const Node*>(node), std::forward<Args>(args)...);
  }

  static const std::array<Thunk, kTableSize>& Table() {
    static const std::array<Thunk, kTableSize> table = [] {
      std::array<Thunk, kTableSize> t{};
      auto set = [&t](ObjectKind kind, Thunk thunk) { t[static_cast<size_t>(kind)] = thunk; };
      set(ObjectKind::kVar, &Call<VarNode, &ExprFunctor::VisitVar_>);
      set(ObjectKind::kGlobalVar, &Call<GlobalVarNode, &ExprFunctor::VisitGlobalVar_>);
      set(ObjectKind::kConstant, &Call<ConstantNode, &ExprFunctor::VisitConstant_>);
      set(ObjectKind::kOp, &Call<OpNode, &ExprFunctor::VisitOp_>);
      set(ObjectKind::kCall, &Call<CallNode, &ExprFunctor::VisitCall_>);
      set(ObjectKind::kTuple, &Call<TupleNode, &ExprFunctor::VisitTuple_>);
      set(ObjectKind::kTupleGetItem, &Call<TupleGetItemNode, &ExprFunctor::VisitTupleGetItem_>);
      set(ObjectKind::kLet, &Call<LetNode, &ExprFunctor::VisitLet_>);
      set(ObjectKind::kIf, &Call<IfNode, &ExprFunctor::VisitIf_>);
      set(ObjectKind::kFunction, &Call<FunctionNode, &ExprFunctor::VisitFunction_>);
      return t;
    }();
    return table;
  }
};

// Kinds whose children traversals walk with an explicit stack: the dataflow
// nodes and Let (whose bodies form chains as long as the program).
inline bool IsIterativeKind(ObjectKind kind) {
  return IsDataflowKind(kind) || kind == ObjectKind::kLet;
}

}  // namespace kiln
