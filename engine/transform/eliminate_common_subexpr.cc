// EliminateCommonSubexpr: value numbering, then a rebuild.
//
// Two phases, because a survivor's span depends on every node it absorbs: a
// one-pass rewriter would have handed the first occurrence to its users before
// meeting the second, and changing its span then would make a second node.
// Phase 1 numbers the values of one function bottom-up (a node's number is
// determined by its kind, operator, attributes and its operands' numbers);
// phase 2 rebuilds the function with one node per number, carrying the
// flattened SequentialSpan of the nodes it stands for.
#include "engine/transform/eliminate_common_subexpr.h"

#include <unordered_map>
#include <vector>

#include "engine/ir/expr_mutator.h"
#include "engine/ir/expr_visitor.h"
#include "engine/op/op_registry.h"
#include "engine/transform/si_builder.h"

namespace kiln::transform {
namespace {

// Constants up to this size are merged by content; comparing (and hashing)
// weight tensors of megabytes is not worth it, and two equal weights are rare.
constexpr size_t kMaxMergedConstantBytes = 1024;

struct ValueKey {
  ObjectKind kind;
  const void* op = nullptr;  // the Op of a call
  Attrs attrs;
  int64_t index = 0;         // TupleGetItem's index
  std::vector<int> operands; // value numbers
  const TensorDataNode* data = nullptr;

  bool operator==(const ValueKey& other) const {
    if (kind != other.kind || op != other.op || index != other.index ||
        operands != other.operands || !AttrsEqual(attrs, other.attrs)) {
      return false;
    }
    if ((data == nullptr) != (other.data == nullptr)) return false;
    return data == nullptr || (data->dtype == other.data->dtype &&
                               data->shape == other.data->shape &&
                               data->bytes == other.data->bytes);
  }
};

struct ValueKeyHash {
  size_t operator()(const ValueKey& key) const {
    size_t h = static_cast<size_t>(key.kind) * 0x9e3779b97f4a7c15ULL;
    auto mix = [&h](size_t v) { h ^= v + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2); };
    mix(std::hash<const void*>()(key.op));
    mix(AttrsHash(key.attrs));
    mix(std::hash<int64_t>()(key.index));
    for (int operand : key.operands) mix(std::hash<int>()(operand));
    if (key.data != nullptr) mix(std::hash<std::string>()(key.data->bytes));
    return h;
  }
};

class ValueNumbering : public ExprVisitor {
 public:
  explicit ValueNumbering(const ExprNode* root) : root_(root) {}

  int NumberOf(const ExprNode* node) const { return number_.at(node); }
  const std::vector<const ExprNode*>& Members(int number) const { return members_[number]; }

 protected:
  // A nested function is numbered by identity here and simplified on its own
  // in phase 2: value numbers never cross a function boundary.
  void VisitFunction_(const FunctionNode* op) override {
    if (op == root_) ExprVisitor::VisitFunction_(op);
  }

  void VisitExpr_(const Expr& expr) override {
    ExprVisitor::VisitExpr_(expr);
    std::optional<ValueKey> key = KeyOf(expr.get());
    int number;
    if (!key) {
      number = static_cast<int>(members_.size());
      members_.emplace_back();
    } else {
      auto [it, inserted] = table_.emplace(std::move(*key), static_cast<int>(members_.size()));
      if (inserted) members_.emplace_back();
      number = it->second;
    }
    number_[expr.get()] = number;
    members_[number].push_back(expr.get());
  }

 private:
  int Operand(const Expr& e) const { return number_.at(e.get()); }

  std::optional<ValueKey> KeyOf(const ExprNode* node) const {
    switch (node->kind()) {
      case ObjectKind::kCall: {
        const auto* call = static_cast<const CallNode*>(node);
        const auto* op = call->op.as<OpNode>();
        if (op == nullptr) return std::nullopt;  // calls of functions: not known pure
        const OpEntry* entry = OpRegistry::Global().FindCallee(call->op);
        if (entry == nullptr || entry->stateful) return std::nullopt;
        ValueKey key{ObjectKind::kCall, op, call->attrs, 0, {}, nullptr};
        for (const Expr& arg : call->args) key.operands.push_back(Operand(arg));
        return key;
      }
      case ObjectKind::kTuple: {
        ValueKey key{ObjectKind::kTuple, nullptr, nullptr, 0, {}, nullptr};
        for (const Expr& e : static_cast<const TupleNode*>(node)->elements) {
          key.operands.push_back(Operand(e));
        }
        return key;
      }
      case ObjectKind::kTupleGetItem: {
        const auto* item = static_cast<const TupleGetItemNode*>(node);
        return ValueKey{ObjectKind::kTupleGetItem, nullptr, nullptr, item->index,
                        {Operand(item->tuple)}, nullptr};
      }
      case ObjectKind::kConstant: {
        const auto* constant = static_cast<const ConstantNode*>(node);
        // A constant pinned to a device is a different value from a host one.
        if (constant->data->bytes.size() > kMaxMergedConstantBytes || constant->virtual_device) {
          return std::nullopt;
        }
        return ValueKey{ObjectKind::kConstant, nullptr, nullptr, 0, {}, constant->data.get()};
      }
      default:
        return std::nullopt;
    }
  }

  const ExprNode* root_;
  std::unordered_map<const ExprNode*, int> number_;
  std::vector<std::vector<const ExprNode*>> members_;
  std::unordered_map<ValueKey, int, ValueKeyHash> table_;
};

Expr EliminateInFunction(const Expr& func, bool merge_spans);

class Rebuilder : public PostOrderRewriter {
 public:
  Rebuilder(const ExprNode* root, const ValueNumbering& numbering, bool merge_spans)
      : root_(root), numbering_(numbering), merge_spans_(merge_spans) {}

 protected:
  Expr VisitFunction_(const FunctionNode* op) override {
    if (op == root_) return PostOrderRewriter::VisitFunction_(op);
    if (op->HasNonzeroAttr(kAttrPrimitive)) return Expr(op);
    return EliminateInFunction(Expr(op), merge_spans_);
  }

  Result Rewrite_(const CallNode* pre, const Expr& post) override { return Merge(pre, post); }
  Result Rewrite_(const TupleNode* pre, const Expr& post) override { return Merge(pre, post); }
  Result Rewrite_(const TupleGetItemNode* pre, const Expr& post) override {
    return Merge(pre, post);
  }
  Result Rewrite_(const ConstantNode* pre, const Expr& post) override { return Merge(pre, post); }

 private:
  Expr Merge(const ExprNode* pre, const Expr& post) {
    int number = numbering_.NumberOf(pre);
    const std::vector<const ExprNode*>& members = numbering_.Members(number);
    if (members.size() == 1) return post;
    auto it = survivors_.find(number);
    if (it != survivors_.end()) return it->second;
    // The first occurrence survives; its operands are the rebuilt operands of
    // every member, since equal numbers mean operands with equal numbers.
    Expr survivor = post;
    if (merge_spans_) {
      std::vector<Span> spans;
      for (const ExprNode* member : members) spans.push_back(member->span);
      Span merged = MakeSequentialSpan(spans);
      if (!SpanEqual(merged, post->span)) survivor = WithSpan(post, merged);
    }
    survivors_.emplace(number, survivor);
    return survivor;
  }

  const ExprNode* root_;
  const ValueNumbering& numbering_;
  bool merge_spans_;
  std::unordered_map<int, Expr> survivors_;
};

Expr EliminateInFunction(const Expr& func, bool merge_spans) {
  ValueNumbering numbering(func.get());
  numbering.VisitExpr(func);
  Rebuilder rebuilder(func.get(), numbering, merge_spans);
  return rebuilder.VisitExpr(func);
}

}  // namespace

Pass EliminateCommonSubexpr() {
  return CreateFunctionPass(
      [](const Function& func, const IRModule&, PassContext&) -> absl::StatusOr<Function> {
        // The spans of merged nodes are combined by the SIBuilder rule, and
        // like SIBuilder only when `ir.enable_si_builder` is on.
        bool merge_spans = SIBuilder::EnabledInCurrentContext();
        return Downcast<FunctionNode>(EliminateInFunction(func, merge_spans));
      },
      PassInfo{"EliminateCommonSubexpr", 3, {"InferType"}, PassStage::kGraph});
}

}  // namespace kiln::transform
