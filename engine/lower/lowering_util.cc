// Span labels and static tensor leaves of graph types.
#include "engine/lower/lowering_util.h"

#include <unordered_set>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "engine/support/status_macros.h"

namespace kiln::lower {

std::string SpanLabel(const Span& span) {
  std::vector<std::string> names = SpanSourceNames(span);
  if (names.empty()) return "no span";
  if (names.size() == 1) return absl::StrCat("si=", names[0]);
  return absl::StrCat("si=[", absl::StrJoin(names, ", "), "]");
}

std::string NodePrefix(const std::string& what, const Span& span) {
  return absl::StrCat(what, " (", SpanLabel(span), "): ");
}

absl::Status Prefixed(const std::string& prefix, const absl::Status& status) {
  return absl::Status(status.code(), absl::StrCat(prefix, std::string(status.message())));
}

namespace {

absl::Status AppendLeaves(const Type& type, std::vector<TensorLeaf>* leaves) {
  if (!type) return absl::InvalidArgumentError("the value has no type (run InferType first)");
  if (const auto* tensor = type.as<TensorTypeNode>()) {
    TensorLeaf leaf{tensor->dtype, {}};
    for (const Dim& dim : tensor->shape) {
      if (!dim.is_static()) {
        return absl::UnimplementedError("symbolic shapes are not supported");
      }
      leaf.shape.push_back(dim.value);
    }
    leaves->push_back(std::move(leaf));
    return absl::OkStatus();
  }
  if (const auto* tuple = type.as<TupleTypeNode>()) {
    for (const Type& field : tuple->fields) KILN_RETURN_IF_ERROR(AppendLeaves(field, leaves));
    return absl::OkStatus();
  }
  return absl::UnimplementedError("function-typed values are not supported");
}

}  // namespace

absl::StatusOr<std::vector<TensorLeaf>> TensorLeaves(const Type& type) {
  std::vector<TensorLeaf> leaves;
  KILN_RETURN_IF_ERROR(AppendLeaves(type, &leaves));
  return leaves;
}

int LeafCount(const Type& type) {
  if (!type) return 0;
  if (const auto* tuple = type.as<TupleTypeNode>()) {
    int count = 0;
    for (const Type& field : tuple->fields) count += LeafCount(field);
    return count;
  }
  return type.as<TensorTypeNode>() != nullptr ? 1 : 0;
}

absl::Status VisitDataflowPostOrder(const Expr& root,
                                    const std::function<absl::Status(const Expr&)>& visit,
                                    const std::function<void(const LetNode&)>& bind_let) {
  auto child = [](const Expr& node, size_t index) -> const Expr* {
    if (const auto* call = node.as<CallNode>()) {
      return index < call->args.size() ? &call->args[index] : nullptr;
    }
    if (const auto* tuple = node.as<TupleNode>()) {
      return index < tuple->elements.size() ? &tuple->elements[index] : nullptr;
    }
    if (const auto* get = node.as<TupleGetItemNode>()) return index == 0 ? &get->tuple : nullptr;
    if (const auto* let = node.as<LetNode>()) {
      if (index == 0) return &let->value;
      return index == 1 ? &let->body : nullptr;
    }
    return nullptr;
  };
  std::vector<std::pair<Expr, size_t>> stack;
  std::unordered_set<const ExprNode*> seen;
  stack.emplace_back(root, 0);
  seen.insert(root.get());
  while (!stack.empty()) {
    auto& [node, next] = stack.back();
    if (const auto* let = node.as<LetNode>(); let != nullptr && next == 1) bind_let(*let);
    if (const Expr* kid = child(node, next)) {
      ++next;
      if (seen.insert(kid->get()).second) stack.emplace_back(*kid, 0);
      continue;
    }
    Expr done = std::move(node);
    stack.pop_back();
    KILN_RETURN_IF_ERROR(visit(done));
  }
  return absl::OkStatus();
}

}  // namespace kiln::lower
