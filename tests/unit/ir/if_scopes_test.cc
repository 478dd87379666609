// IfScopes: the scope each node of a body is computed in under run-time Ifs (the lowest common
// ancestor of its uses' scopes), and what an If computes before branching.
#include "engine/ir/if_scopes.h"

#include <gtest/gtest.h>

#include "engine/ir/module.h"

namespace kiln {
namespace {

Expr Relu(const Expr& x) { return MakeCall(GetOp("nn.relu"), {x}); }
Expr Neg(const Expr& x) { return MakeCall(GetOp("negative"), {x}); }
Expr Add(const Expr& a, const Expr& b) { return MakeCall(GetOp("add"), {a, b}); }

bool NeverDone(const ExprNode*) { return false; }

// if (c) { relu(a) } else { neg(b) } + a, where a = relu(x) is also read after the If and
// b = neg(x) only by the else-branch.
TEST(IfScopesTest, EachNodeBelongsToTheInnermostScopeHoldingItsUses) {
  Var x = MakeVar("x");
  Var c = MakeVar("c");
  Expr a = Relu(x);
  Expr b = Neg(x);
  Expr then_value = Relu(a);
  Expr branch = MakeIf(c, then_value, b);
  Expr body = Add(branch, a);
  IfScopes scopes(body);
  EXPECT_EQ(scopes.ScopeOf(body.get()), 0);
  EXPECT_EQ(scopes.ScopeOf(branch.get()), 0);
  EXPECT_EQ(scopes.ScopeOf(a.get()), 0);  // read by the then-branch and after the If
  int then_scope = scopes.ScopeOf(then_value.get());
  int else_scope = scopes.ScopeOf(b.get());
  EXPECT_GT(then_scope, 0);
  EXPECT_GT(else_scope, 0);
  EXPECT_NE(then_scope, else_scope);
  EXPECT_EQ(scopes.MaxDepth(), 1);
  // Before the If: a (and the variables c and x), operands first; not the branches' values.
  std::vector<const ExprNode*> before = scopes.ComputedBefore(branch.get(), NeverDone);
  EXPECT_EQ(before, (std::vector<const ExprNode*>{c.get(), x.get(), a.get()}));
  EXPECT_TRUE(scopes.ComputedBefore(branch.get(), [&](const ExprNode* n) {
                      return n->kind() == ObjectKind::kVar || n == a.get();
                    }).empty());
}

// A value both branches read belongs to the If's scope; nested Ifs deepen the scopes.
TEST(IfScopesTest, AValueBothBranchesReadIsComputedBeforeTheIf) {
  Var x = MakeVar("x");
  Var c = MakeVar("c");
  Expr shared = Relu(x);
  Expr inner = MakeIf(c, Neg(shared), shared);
  Expr outer = MakeIf(c, inner, Relu(shared));
  IfScopes scopes(outer);
  EXPECT_EQ(scopes.ScopeOf(shared.get()), 0);
  EXPECT_EQ(scopes.MaxDepth(), 2);
  EXPECT_GT(scopes.ScopeOf(inner.get()), 0);
  std::vector<const ExprNode*> before = scopes.ComputedBefore(outer.get(), NeverDone);
  EXPECT_EQ(before, (std::vector<const ExprNode*>{c.get(), x.get(), shared.get()}));
  // The inner If is inside the outer's then-branch: nothing of that scope precedes it.
  EXPECT_TRUE(scopes.ComputedBefore(inner.get(), [&](const ExprNode* n) {
                      return n == x.get() || n == shared.get();
                    }).empty());
}

}  // namespace
}  // namespace kiln
