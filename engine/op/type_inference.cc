// Type inference: an iterative typing walk, then a rebuild that stores the
// types (and normalized call attributes) on the nodes.
#include "engine/op/type_inference.h"

#include <unordered_map>
#include <vector>

#include "absl/strings/str_cat.h"
#include "engine/ir/expr_mutator.h"
#include "engine/ir/structural_equal.h"
#include "engine/op/type_relations.h"
#include "engine/support/request_limits.h"
#include "engine/support/status_macros.h"

namespace kiln {
namespace {

std::string DescribeNode(const ExprNode* node) {
  std::string what;
  if (const auto* call = Expr(node).as<CallNode>()) {
    if (const auto* op = call->op.as<OpNode>()) {
      what = op->name;
    } else {
      what = "call";
    }
  } else {
    what = ObjectKindName(node->kind());
  }
  std::vector<std::string> names = SpanSourceNames(node->span);
  if (!names.empty()) {
    std::string joined;
    for (const std::string& n : names) absl::StrAppend(&joined, joined.empty() ? "" : ", ", n);
    absl::StrAppend(&what, " (span ", joined, ")");
  }
  return what;
}

absl::Status NodeError(const ExprNode* node, absl::string_view message) {
  return absl::InvalidArgumentError(
      absl::StrCat("type error at ", DescribeNode(node), ": ", message));
}

class TypeInferencer {
 public:
  explicit TypeInferencer(const std::unordered_map<std::string, Type>* global_types)
      : global_types_(global_types) {}

  absl::StatusOr<Expr> Run(const Expr& root) {
    KILN_RETURN_IF_ERROR(ComputeTypes(root));
    Annotator annotator(this);
    return annotator.VisitExpr(root);
  }

 private:
  // Phase 2: stores the computed types on rebuilt nodes.
  class Annotator : public ExprMutator {
   public:
    explicit Annotator(TypeInferencer* owner) : owner_(owner) {}

   protected:
    bool KeepSubtree(const ExprNode* expr) const override {
      return expr->checked_type.defined() || expr->kind() == ObjectKind::kOp;
    }
    Expr VisitExpr_(const Expr& pre) override {
      Expr post = ExprMutator::VisitExpr_(pre);
      ExprFields fields = post->fields();
      auto it = owner_->types_.find(pre.get());
      if (it == owner_->types_.end()) return post;  // e.g. an Op callee
      fields.checked_type = it->second;
      if (const auto* var = post.as<VarNode>()) {
        Type annotation = var->type_annotation ? var->type_annotation : it->second;
        return MakeRef<VarNode>(var->name_hint, annotation, std::move(fields));
      }
      if (const auto* call = post.as<CallNode>()) {
        auto attrs = owner_->normalized_attrs_.find(pre.as<CallNode>());
        if (attrs != owner_->normalized_attrs_.end()) {
          return MakeRef<CallNode>(call->op, call->args, attrs->second, std::move(fields));
        }
      }
      return WithFields(post, std::move(fields));
    }

   private:
    TypeInferencer* owner_;
  };

  struct Frame {
    const ExprNode* node;
    int state;
  };

  Type TypeOf(const Expr& expr) const {
    auto it = types_.find(expr.get());
    return it == types_.end() ? Type() : it->second;
  }

  void Push(const Expr& expr) {
    if (expr && !types_.count(expr.get())) stack_.push_back({expr.get(), 0});
  }

  absl::Status ComputeTypes(const Expr& root) {
    Push(root);
    while (!stack_.empty()) {
      Frame& frame = stack_.back();
      const ExprNode* node = frame.node;
      if (types_.count(node)) {
        stack_.pop_back();
        continue;
      }
      if (node->checked_type) {
        types_.emplace(node, node->checked_type);
        stack_.pop_back();
        continue;
      }
      int state = frame.state++;
      KILN_ASSIGN_OR_RETURN(bool done, Step(node, state));
      if (done) {
        // A step that finishes never pushes, so the frame is still on top.
        KILN_CHECK(stack_.back().node == node);
        stack_.pop_back();
      }
    }
    return absl::OkStatus();
  }

  // Advances the typing of `node`; returns true when its type is known.
  absl::StatusOr<bool> Step(const ExprNode* node, int state) {
    switch (node->kind()) {
      case ObjectKind::kVar: {
        const auto* var = static_cast<const VarNode*>(node);
        Type type = var->type_annotation;
        if (auto it = var_types_.find(var); it != var_types_.end()) type = it->second;
        if (!type) {
          return NodeError(node, absl::StrCat("variable %", var->name_hint,
                                              " has no type annotation"));
        }
        types_.emplace(node, type);
        return true;
      }
      case ObjectKind::kGlobalVar: {
        const auto* gv = static_cast<const GlobalVarNode*>(node);
        const Type* type = nullptr;
        if (global_types_ != nullptr) {
          auto it = global_types_->find(gv->name_hint);
          if (it != global_types_->end()) type = &it->second;
        }
        if (type == nullptr) {
          return NodeError(node, absl::StrCat("the type of @", gv->name_hint,
                                              " is not known here (define it earlier in the "
                                              "module or annotate its types)"));
        }
        types_.emplace(node, *type);
        return true;
      }
      case ObjectKind::kOp:
        return NodeError(node, absl::StrCat("operator ", static_cast<const OpNode*>(node)->name,
                                            " used as a value; operators can only be called"));
      case ObjectKind::kConstant: {
        const TensorData& data = static_cast<const ConstantNode*>(node)->data;
        std::vector<Dim> dims;
        for (int64_t d : data->shape) dims.push_back(Dim::Static(d));
        types_.emplace(node, MakeTensorType(std::move(dims), data->dtype));
        return true;
      }
      case ObjectKind::kCall:
        return StepCall(static_cast<const CallNode*>(node), state);
      case ObjectKind::kTuple: {
        const auto* tuple = static_cast<const TupleNode*>(node);
        if (state == 0) {
          for (auto it = tuple->elements.rbegin(); it != tuple->elements.rend(); ++it) Push(*it);
          return false;
        }
        std::vector<Type> fields;
        for (const Expr& e : tuple->elements) fields.push_back(TypeOf(e));
        types_.emplace(node, MakeTupleType(std::move(fields)));
        return true;
      }
      case ObjectKind::kTupleGetItem: {
        const auto* item = static_cast<const TupleGetItemNode*>(node);
        if (state == 0) {
          Push(item->tuple);
          return false;
        }
        Type tuple_type = TypeOf(item->tuple);
        const auto* tuple = tuple_type.as<TupleTypeNode>();
        if (tuple == nullptr) {
          return NodeError(node, absl::StrCat("expected a tuple, got ", TypeToString(tuple_type)));
        }
        if (item->index < 0 || item->index >= static_cast<int>(tuple->fields.size())) {
          return NodeError(node, absl::StrCat("index ", item->index, " out of range for a tuple of ",
                                              tuple->fields.size(), " fields"));
        }
        types_.emplace(node, tuple->fields[item->index]);
        return true;
      }
      case ObjectKind::kLet: {
        const auto* let = static_cast<const LetNode*>(node);
        if (state == 0) {
          Push(let->value);
          return false;
        }
        if (state == 1) {
          Type value_type = TypeOf(let->value);
          if (let->var->type_annotation &&
              !StructuralEqual(let->var->type_annotation, value_type)) {
            return NodeError(node, absl::StrCat("%", let->var->name_hint, " is annotated ",
                                                TypeToString(let->var->type_annotation),
                                                " but bound to ", TypeToString(value_type)));
          }
          var_types_[let->var.get()] = value_type;
          Push(let->var);
          Push(let->body);
          return false;
        }
        types_.emplace(node, TypeOf(let->body));
        return true;
      }
      case ObjectKind::kIf: {
        const auto* if_node = static_cast<const IfNode*>(node);
        if (state == 0) {
          Push(if_node->false_branch);
          Push(if_node->true_branch);
          Push(if_node->cond);
          return false;
        }
        Type cond = TypeOf(if_node->cond);
        const auto* cond_tensor = cond.as<TensorTypeNode>();
        if (cond_tensor == nullptr || cond_tensor->dtype != DataType::kBool ||
            !cond_tensor->shape.empty()) {
          return NodeError(node, absl::StrCat("condition must be Tensor[(), bool], got ",
                                              TypeToString(cond)));
        }
        Type then_type = TypeOf(if_node->true_branch);
        Type else_type = TypeOf(if_node->false_branch);
        if (!StructuralEqual(then_type, else_type)) {
          return NodeError(node, absl::StrCat("branches differ: ", TypeToString(then_type),
                                              " vs ", TypeToString(else_type)));
        }
        types_.emplace(node, then_type);
        return true;
      }
      case ObjectKind::kFunction: {
        const auto* func = static_cast<const FunctionNode*>(node);
        if (state == 0) {
          for (const Var& param : func->params) {
            if (!param->type_annotation) {
              return NodeError(node, absl::StrCat("parameter %", param->name_hint,
                                                  " has no type annotation"));
            }
          }
          Push(func->body);
          for (const Var& param : func->params) Push(param);
          return false;
        }
        Type body_type = TypeOf(func->body);
        if (func->ret_type && !StructuralEqual(func->ret_type, body_type)) {
          return NodeError(node, absl::StrCat("declared to return ", TypeToString(func->ret_type),
                                              " but the body has type ",
                                              TypeToString(body_type)));
        }
        std::vector<Type> params;
        for (const Var& param : func->params) params.push_back(param->type_annotation);
        types_.emplace(node, MakeFuncType(std::move(params), body_type));
        return true;
      }
      default:
        return NodeError(node, "not a graph expression");
    }
  }

  absl::StatusOr<bool> StepCall(const CallNode* call, int state) {
    const auto* op = call->op.as<OpNode>();
    if (state == 0) {
      for (auto it = call->args.rbegin(); it != call->args.rend(); ++it) Push(*it);
      if (op == nullptr) Push(call->op);
      return false;
    }
    std::vector<Type> arg_types;
    arg_types.reserve(call->args.size());
    for (const Expr& arg : call->args) arg_types.push_back(TypeOf(arg));
    if (op != nullptr) {
      const OpEntry* entry = OpRegistry::Global().Find(op->name);
      if (entry == nullptr) return NodeError(call, absl::StrCat("unknown operator ", op->name));
      auto normalized = NormalizeAttrs(*entry, call->attrs);
      if (!normalized.ok()) return NodeError(call, normalized.status().message());
      auto type = InferCallType(*entry, arg_types, *normalized);
      if (!type.ok()) return NodeError(call, type.status().message());
      normalized_attrs_.emplace(call, *normalized);
      types_.emplace(call, *type);
      return true;
    }
    Type callee = TypeOf(call->op);
    const auto* func_type = callee.as<FuncTypeNode>();
    if (func_type == nullptr) {
      return NodeError(call, absl::StrCat("callee is not a function: ", TypeToString(callee)));
    }
    if (func_type->arg_types.size() != arg_types.size()) {
      return NodeError(call, absl::StrCat("expected ", func_type->arg_types.size(),
                                          " arguments, got ", arg_types.size()));
    }
    for (size_t i = 0; i < arg_types.size(); ++i) {
      if (!StructuralEqual(func_type->arg_types[i], arg_types[i])) {
        return NodeError(call, absl::StrCat("argument ", i, " expected ",
                                            TypeToString(func_type->arg_types[i]), ", got ",
                                            TypeToString(arg_types[i])));
      }
    }
    types_.emplace(call, func_type->ret_type);
    return true;
  }

  const std::unordered_map<std::string, Type>* global_types_;
  std::vector<Frame> stack_;
  std::unordered_map<const ExprNode*, Type> types_;
  std::unordered_map<const VarNode*, Type> var_types_;
  std::unordered_map<const CallNode*, Attrs> normalized_attrs_;
};

}  // namespace

absl::StatusOr<Type> InferCallType(const OpEntry& op, const std::vector<Type>& arg_types,
                                   const Attrs& attrs) {
  int n = static_cast<int>(arg_types.size());
  if (n < op.min_args || (op.max_args >= 0 && n > op.max_args)) {
    std::string expected = op.max_args < 0 ? absl::StrCat("at least ", op.min_args)
                           : op.min_args == op.max_args
                               ? absl::StrCat(op.min_args)
                               : absl::StrCat(op.min_args, " to ", op.max_args);
    return absl::InvalidArgumentError(
        absl::StrCat(op.name, " expects ", expected, " arguments, got ", n));
  }
  KILN_ASSIGN_OR_RETURN(Attrs normalized, NormalizeAttrs(op, attrs));
  KILN_CHECK(op.relation) << "operator " << op.name << " has no type relation";
  KILN_ASSIGN_OR_RETURN(Type result, op.relation(TypeRelationInput{arg_types, *normalized}));
  // Attributes may ask for any rank (reshape's newshape, expand_dims): the
  // limit every input is held to holds for results too.
  std::vector<const TensorTypeNode*> tensors;
  if (const auto* tuple = result.as<TupleTypeNode>()) {
    for (const Type& field : tuple->fields) tensors.push_back(field.as<TensorTypeNode>());
  } else {
    tensors.push_back(result.as<TensorTypeNode>());
  }
  for (const TensorTypeNode* tensor : tensors) {
    if (tensor != nullptr && tensor->shape.size() > static_cast<size_t>(kMaxTensorRank)) {
      return absl::InvalidArgumentError(absl::StrCat(op.name, " would give a result of rank ",
                                                     tensor->shape.size(),
                                                     ", more than the limit of ", kMaxTensorRank));
    }
  }
  return result;
}

absl::StatusOr<Expr> InferType(const Expr& expr) {
  TypeInferencer inferencer(nullptr);
  return inferencer.Run(expr);
}

absl::StatusOr<IRModule> InferType(const IRModule& module) {
  std::unordered_map<std::string, Type> global_types;
  std::vector<IRModuleNode::Entry> functions;
  bool changed = false;
  for (const auto& [gv, func] : module->functions) {
    // Loop PrimFuncs are typed by their buffers, not by graph type inference.
    if (func->kind() != ObjectKind::kFunction) {
      functions.emplace_back(gv, func);
      continue;
    }
    TypeInferencer inferencer(&global_types);
    KILN_ASSIGN_OR_RETURN(Expr typed, inferencer.Run(func));
    changed |= !typed.same_as(func);
    global_types[gv->name_hint] = typed->checked_type;
    functions.emplace_back(gv, Downcast<BaseFuncNode>(typed));
  }
  if (!changed) return module;
  return MakeModule(std::move(functions), module->attrs);
}

const TensorTypeNode* TensorTypeOf(const Expr& expr) {
  return expr ? expr->checked_type.as<TensorTypeNode>() : nullptr;
}

}  // namespace kiln
