// SIBuilder: span collection (pre-order, flattened) and span filling
// (an ExprMutator that stops at inputs and at nodes that already have spans).
#include "engine/transform/si_builder.h"

#include <utility>

#include "engine/ir/expr_mutator.h"
#include "engine/ir/expr_walk.h"
#include "engine/pass/pass_config.h"
#include "engine/pass/pass_context.h"

namespace kiln {
namespace {

using NodeSet = std::unordered_set<const ExprNode*>;

NodeSet ToNodeSet(const std::vector<Expr>& exprs) {
  NodeSet set;
  for (const Expr& e : exprs) {
    if (e) set.insert(e.get());
  }
  return set;
}

// References, not computations: they never take part in collecting or filling.
bool IsReference(ObjectKind kind) {
  return kind == ObjectKind::kOp || kind == ObjectKind::kVar || kind == ObjectKind::kGlobalVar;
}

// The seeds' Collapse without the recursion: spans in pre-order (the order
// WalkPostOrder reaches nodes), without the inputs' own spans (an input is an
// operand the rewrite keeps; its span stays on it and does not describe the
// new node).
Span Collapse(const Expr& entry, const NodeSet& inputs) {
  std::vector<Span> spans;
  NodeSet visited;
  auto take = [&](const ExprNode* node) {
    if (inputs.count(node) || IsReference(node->kind()) || !visited.insert(node).second) {
      return false;
    }
    if (node->span) spans.push_back(node->span);
    return true;
  };
  if (take(entry.get())) {
    WalkPostOrder(
        entry.get(), ChildSet::kAll,
        [&](const WalkEdge& edge) { return take(edge.child); },
        [](const ExprNode*) {});
  }
  return MakeSequentialSpan(spans);
}

class SpanFiller : public ExprMutator {
 public:
  SpanFiller(Span span, NodeSet inputs) : span_(std::move(span)), inputs_(std::move(inputs)) {}

 protected:
  bool KeepSubtree(const ExprNode* expr) const override {
    return inputs_.count(expr) || expr->span || IsReference(expr->kind());
  }

  Expr VisitExpr_(const Expr& expr) override {
    Expr post = ExprMutator::VisitExpr_(expr);
    if (post->span) return post;
    return WithSpan(post, span_);
  }

 private:
  Span span_;
  NodeSet inputs_;
};

}  // namespace

bool SIBuilder::EnabledInCurrentContext() {
  return PassContext::Current().GetConfig<bool>(kConfigEnableSIBuilder);
}

SIBuilder::SIBuilder(Span span) : SIBuilder(std::move(span), EnabledInCurrentContext()) {}

SIBuilder::SIBuilder(Span span, bool enabled)
    : enabled_(enabled), span_(enabled ? std::move(span) : Span()) {}

SIBuilder::SIBuilder(const Expr& entry, const std::vector<Expr>& inputs)
    : SIBuilder(entry, inputs, EnabledInCurrentContext()) {}

SIBuilder::SIBuilder(const Expr& entry, const std::vector<Expr>& inputs, bool enabled)
    : enabled_(enabled) {
  // Disabled: skip the walk too, so turning the option off measures the
  // cost of span keeping as a whole.
  if (enabled_ && entry) span_ = Collapse(entry, ToNodeSet(inputs));
}

Span SIBuilder::CreateSpan() const { return enabled_ ? span_ : Span(); }

Expr SIBuilder::RecursivelyFillSpan(const Expr& entry, const std::vector<Expr>& inputs) const {
  if (!enabled_ || !span_ || !entry) return entry;
  SpanFiller filler(span_, ToNodeSet(inputs));
  return filler.VisitExpr(entry);
}

}  // namespace kiln
