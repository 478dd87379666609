// Span labels and static tensor leaves of graph types.
#include "engine/lower/lowering_util.h"

#include <unordered_set>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "engine/ir/expr_walk.h"
#include "engine/te/tensor.h"
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

absl::Status AppendLeaves(const Type& type, bool allow_symbolic, std::vector<TensorLeaf>* leaves) {
  if (!type) return absl::InvalidArgumentError("the value has no type (run InferType first)");
  if (const auto* tensor = type.as<TensorTypeNode>()) {
    TensorLeaf leaf{tensor->dtype, {}, {}};
    for (const Dim& dim : tensor->shape) {
      if (!dim.is_static() && !allow_symbolic) {
        return absl::UnimplementedError("symbolic shapes are not supported");
      }
      leaf.shape.push_back(dim.is_static() ? dim.value : -1);
      leaf.symbols.push_back(dim.is_static() ? "" : dim.symbol);
    }
    leaves->push_back(std::move(leaf));
    return absl::OkStatus();
  }
  if (const auto* tuple = type.as<TupleTypeNode>()) {
    for (const Type& field : tuple->fields) {
      KILN_RETURN_IF_ERROR(AppendLeaves(field, allow_symbolic, leaves));
    }
    return absl::OkStatus();
  }
  return absl::UnimplementedError("function-typed values are not supported");
}

}  // namespace

absl::StatusOr<std::vector<TensorLeaf>> TensorLeaves(const Type& type, bool allow_symbolic) {
  std::vector<TensorLeaf> leaves;
  KILN_RETURN_IF_ERROR(AppendLeaves(type, allow_symbolic, &leaves));
  return leaves;
}

absl::StatusOr<std::vector<loop::PrimExpr>> LeafDims(const TensorLeaf& leaf) {
  std::vector<loop::PrimExpr> dims;
  for (size_t d = 0; d < leaf.shape.size(); ++d) {
    if (leaf.shape[d] >= 0) {
      dims.push_back(loop::IntImm(leaf.shape[d]));
      continue;
    }
    loop::Var var = leaf.symbols[d].empty() ? loop::Var() : te::SymbolScope::Lookup(leaf.symbols[d]);
    if (!var.defined()) {
      return absl::UnimplementedError(absl::StrCat(
          "dimension ", d, " is symbolic but not a symbol of the model's inputs (",
          leaf.symbols[d].empty() ? "unnamed" : leaf.symbols[d],
          "); code generation needs each dimension to be a constant or an input's symbol"));
    }
    dims.push_back(var);
  }
  return dims;
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
  std::unordered_set<const ExprNode*> seen{root.get()};
  return WalkPostOrder(
      root.get(), ChildSet::kDataflow,
      [&](const WalkEdge& edge) {
        if (edge.role == ChildRole::kLetBody) bind_let(*static_cast<const LetNode*>(edge.parent));
        return seen.insert(edge.child).second;
      },
      [&](const ExprNode* node) { return visit(Expr(node)); });
}

}  // namespace kiln::lower
