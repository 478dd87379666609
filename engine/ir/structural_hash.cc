// Structural hashing consistent with StructuralEqual's default options.
//
// Variables hash by what a definition carries (type annotation, virtual
// device), never by identity or name, so alpha-equivalent programs hash alike.
// Spans and checked types are ignored. The walk is WalkPostOrder with a memo
// per node: chains cost no stack depth, DAGs stay linear.
#include <functional>
#include <string>
#include <unordered_map>

#include "engine/ir/expr_functor.h"
#include "engine/ir/expr_walk.h"
#include "engine/ir/structural_equal.h"

namespace kiln {
namespace {

uint64_t Mix(uint64_t seed, uint64_t value) {
  // boost::hash_combine widened to 64 bits.
  return seed ^ (value + 0x9e3779b97f4a7c15ULL + (seed << 12) + (seed >> 4));
}

uint64_t HashString(const std::string& s) { return std::hash<std::string>()(s); }

class StructuralHasher {
 public:
  uint64_t Hash(const Object* root) {
    if (root == nullptr) return 0;
    if (TypeNode::IsKind(root->kind())) return HashType(static_cast<const TypeNode*>(root));
    if (root->kind() == ObjectKind::kIRModule) {
      const auto* module = static_cast<const IRModuleNode*>(root);
      uint64_t h = Mix(0x4d6f64756c65ULL, AttrsHash(module->attrs));
      for (const auto& [gv, func] : module->functions) {
        h = Mix(h, HashString(gv->name_hint));
        h = Mix(h, HashExpr(func.get()));
      }
      return h;
    }
    KILN_CHECK(ExprNode::IsKind(root->kind()))
        << "cannot hash a " << ObjectKindName(root->kind());
    return HashExpr(static_cast<const ExprNode*>(root));
  }

 private:
  uint64_t HashType(const TypeNode* type) {
    if (type == nullptr) return 0x7e11;
    uint64_t h = static_cast<uint64_t>(type->kind()) + 1;
    switch (type->kind()) {
      case ObjectKind::kTensorType: {
        const auto* t = static_cast<const TensorTypeNode*>(type);
        h = Mix(h, static_cast<uint64_t>(t->dtype));
        for (const Dim& dim : t->shape) {
          h = Mix(h, static_cast<uint64_t>(dim.value));
          if (!dim.is_static()) h = Mix(h, HashString(dim.symbol));
        }
        return h;
      }
      case ObjectKind::kTupleType:
        for (const Type& field : static_cast<const TupleTypeNode*>(type)->fields) {
          h = Mix(h, HashType(field.get()));
        }
        return h;
      case ObjectKind::kFuncType: {
        const auto* f = static_cast<const FuncTypeNode*>(type);
        for (const Type& arg : f->arg_types) h = Mix(h, HashType(arg.get()));
        return Mix(h, HashType(f->ret_type.get()));
      }
      default:
        return h;
    }
  }

  uint64_t HashVirtualDevice(const VirtualDevice& device) {
    if (IsFullyUnconstrained(device)) return 0xde5ULL;
    uint64_t h = HashString(device->device_type);
    h = Mix(h, static_cast<uint64_t>(device->device_id));
    h = Mix(h, HashString(device->target));
    return Mix(h, HashString(device->memory_scope));
  }

  // The hash of a node whose children are all in memo_.
  uint64_t Combine(const ExprNode* expr) {
    uint64_t h = static_cast<uint64_t>(expr->kind()) * 0x100000001b3ULL;
    auto child = [this](const Expr& e) { return e ? memo_.at(e.get()) : 0x9011ULL; };
    switch (expr->kind()) {
      case ObjectKind::kVar: {
        const auto* var = static_cast<const VarNode*>(expr);
        h = Mix(h, HashType(var->type_annotation.get()));
        return Mix(h, HashVirtualDevice(var->virtual_device));
      }
      case ObjectKind::kGlobalVar:
        return Mix(h, HashString(static_cast<const GlobalVarNode*>(expr)->name_hint));
      case ObjectKind::kOp:
        return Mix(h, HashString(static_cast<const OpNode*>(expr)->name));
      case ObjectKind::kConstant: {
        const TensorData& data = static_cast<const ConstantNode*>(expr)->data;
        h = Mix(h, static_cast<uint64_t>(data->dtype));
        for (int64_t d : data->shape) h = Mix(h, static_cast<uint64_t>(d));
        return Mix(h, std::hash<std::string>()(data->bytes));
      }
      case ObjectKind::kCall: {
        const auto* call = static_cast<const CallNode*>(expr);
        h = Mix(h, child(call->op));
        for (const Expr& arg : call->args) h = Mix(h, child(arg));
        return Mix(h, AttrsHash(call->attrs));
      }
      case ObjectKind::kTuple:
        for (const Expr& field : static_cast<const TupleNode*>(expr)->elements) {
          h = Mix(h, child(field));
        }
        return h;
      case ObjectKind::kTupleGetItem: {
        const auto* item = static_cast<const TupleGetItemNode*>(expr);
        return Mix(Mix(h, child(item->tuple)), static_cast<uint64_t>(item->index));
      }
      case ObjectKind::kLet: {
        const auto* let = static_cast<const LetNode*>(expr);
        return Mix(Mix(Mix(h, child(let->var)), child(let->value)), child(let->body));
      }
      case ObjectKind::kIf: {
        const auto* node = static_cast<const IfNode*>(expr);
        h = Mix(h, child(node->cond));
        return Mix(Mix(h, child(node->true_branch)), child(node->false_branch));
      }
      case ObjectKind::kFunction: {
        const auto* func = static_cast<const FunctionNode*>(expr);
        for (const Var& param : func->params) h = Mix(h, child(param));
        h = Mix(h, child(func->body));
        h = Mix(h, HashType(func->ret_type.get()));
        h = Mix(h, AttrsHash(func->attrs));
        return Mix(h, HashVirtualDevice(func->virtual_device));
      }
      case ObjectKind::kPrimFunc:
        // Equal PrimFuncs are the same node (StructuralEqual compares them by identity), so
        // any value fixed per node is consistent; the attributes keep it deterministic
        // without reading loop IR from this layer.
        return Mix(h, AttrsHash(static_cast<const BaseFuncNode*>(expr)->attrs));
      default:
        KILN_UNREACHABLE() << ObjectKindName(expr->kind());
        return h;
    }
  }

  uint64_t HashExpr(const ExprNode* root) {
    if (!memo_.count(root)) {
      WalkPostOrder(
          root, ChildSet::kAll,
          [this](const WalkEdge& edge) { return !memo_.count(edge.child); },
          [this](const ExprNode* node) { memo_.emplace(node, Combine(node)); });
    }
    return memo_.at(root);
  }

  std::unordered_map<const ExprNode*, uint64_t> memo_;
};

}  // namespace

uint64_t StructuralHash(const ObjectRef& value) {
  StructuralHasher hasher;
  return hasher.Hash(value.get());
}

}  // namespace kiln
