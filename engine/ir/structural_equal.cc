// Structural equality with variable mapping and first-mismatch paths.
//
// One explicit stack of (lhs, rhs) pairs, popped in pre-order with children
// pushed in reverse, so the first mismatch found is the first in print order
// and no dataflow chain costs stack depth. Pairs already compared are skipped,
// which keeps shared subgraphs (DAGs) linear.
#include "engine/ir/structural_equal.h"

#include <deque>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace kiln {
namespace {

// One step of a path from the root to a compared pair.
struct PathStep {
  int parent = -1;
  std::string_view field;  // "body", "args", "@main", ...
  int64_t index = -1;      // element index, or -1
  std::string_view key;    // attribute key, or empty
};

struct PairHash {
  size_t operator()(const std::pair<const Object*, const Object*>& p) const {
    return std::hash<const void*>()(p.first) * 31 + std::hash<const void*>()(p.second);
  }
};

std::string DimToString(const Dim& dim) {
  if (dim.is_static()) return absl::StrCat(dim.value);
  return dim.symbol.empty() ? "?" : dim.symbol;
}

class StructuralComparer {
 public:
  explicit StructuralComparer(const StructuralEqualOptions& options) : options_(options) {}

  std::optional<StructuralMismatch> Run(const ObjectRef& lhs, const ObjectRef& rhs) {
    Push(lhs.get(), rhs.get(), -1, "", -1);
    while (!stack_.empty() && !failed_) {
      Task task = stack_.back();
      stack_.pop_back();
      Compare(task);
    }
    if (!failed_) return std::nullopt;
    StructuralMismatch mismatch;
    mismatch.path = RenderPath(fail_path_);
    mismatch.reason = std::move(fail_reason_);
    mismatch.lhs = ObjectRef(fail_lhs_);
    mismatch.rhs = ObjectRef(fail_rhs_);
    return mismatch;
  }

 private:
  struct Task {
    const Object* lhs;
    const Object* rhs;
    int path;
  };

  int AddStep(int parent, std::string_view field, int64_t index, std::string_view key = {}) {
    path_.push_back(PathStep{parent, field, index, key});
    return static_cast<int>(path_.size()) - 1;
  }

  void Push(const Object* lhs, const Object* rhs, int parent, std::string_view field,
            int64_t index = -1) {
    stack_.push_back(Task{lhs, rhs, AddStep(parent, field, index)});
  }

  std::string RenderPath(int index) const {
    std::vector<const PathStep*> steps;
    for (int i = index; i >= 0; i = path_[i].parent) steps.push_back(&path_[i]);
    std::string out;
    for (auto it = steps.rbegin(); it != steps.rend(); ++it) {
      const PathStep& step = **it;
      if (!step.field.empty()) {
        if (!out.empty() && step.field[0] != '@') out += '.';
        out += step.field;
      }
      if (step.index >= 0) absl::StrAppend(&out, "[", step.index, "]");
      if (!step.key.empty()) absl::StrAppend(&out, "[\"", std::string(step.key), "\"]");
    }
    return out.empty() ? "<root>" : out;
  }

  bool Fail(const Object* lhs, const Object* rhs, int path, std::string reason) {
    failed_ = true;
    fail_lhs_ = lhs;
    fail_rhs_ = rhs;
    fail_path_ = path;
    fail_reason_ = std::move(reason);
    return false;
  }

  void Compare(const Task& task) {
    const Object* lhs = task.lhs;
    const Object* rhs = task.rhs;
    if (lhs == rhs) return;
    if (lhs == nullptr || rhs == nullptr) {
      Fail(lhs != nullptr ? lhs : current_lhs_, rhs != nullptr ? rhs : current_rhs_, task.path,
           lhs == nullptr ? "absent on the left" : "absent on the right");
      return;
    }
    if (lhs->kind() != rhs->kind()) {
      Fail(lhs, rhs, task.path,
           absl::StrCat(ObjectKindName(lhs->kind()), " vs ", ObjectKindName(rhs->kind())));
      return;
    }
    if (!done_.insert({lhs, rhs}).second) return;
    current_lhs_ = lhs;
    current_rhs_ = rhs;
    switch (lhs->kind()) {
      case ObjectKind::kIRModule:
        return CompareModule(static_cast<const IRModuleNode*>(lhs),
                             static_cast<const IRModuleNode*>(rhs), task.path);
      case ObjectKind::kTensorType:
      case ObjectKind::kTupleType:
      case ObjectKind::kFuncType:
        return CompareType(static_cast<const TypeNode*>(lhs), static_cast<const TypeNode*>(rhs),
                           task.path);
      default:
        break;
    }
    if (ExprNode::IsKind(lhs->kind())) {
      return CompareExpr(static_cast<const ExprNode*>(lhs), static_cast<const ExprNode*>(rhs),
                         task.path);
    }
    Fail(lhs, rhs, task.path, absl::StrCat("cannot compare ", ObjectKindName(lhs->kind())));
  }

  void CompareModule(const IRModuleNode* lhs, const IRModuleNode* rhs, int path) {
    if (lhs->functions.size() != rhs->functions.size()) {
      Fail(lhs, rhs, path,
           absl::StrCat("module has ", lhs->functions.size(), " vs ", rhs->functions.size(),
                        " functions"));
      return;
    }
    if (!CompareAttrs(lhs->attrs, rhs->attrs, lhs, rhs, AddStep(path, "attrs", -1))) return;
    for (size_t i = 0; i < lhs->functions.size(); ++i) {
      const std::string& lname = lhs->functions[i].first->name_hint;
      const std::string& rname = rhs->functions[i].first->name_hint;
      if (lname != rname) {
        Fail(lhs->functions[i].second.get(), rhs->functions[i].second.get(), path,
             absl::StrCat("function @", lname, " vs @", rname));
        return;
      }
    }
    for (size_t i = lhs->functions.size(); i-- > 0;) {
      // GlobalVars are compared by name, so the path step is the name itself.
      global_names_.push_back("@" + lhs->functions[i].first->name_hint);
    }
    for (size_t i = lhs->functions.size(); i-- > 0;) {
      Push(lhs->functions[i].second.get(), rhs->functions[i].second.get(), path,
           global_names_[lhs->functions.size() - 1 - i]);
    }
  }

  void CompareType(const TypeNode* lhs, const TypeNode* rhs, int path) {
    switch (lhs->kind()) {
      case ObjectKind::kTensorType: {
        const auto* a = static_cast<const TensorTypeNode*>(lhs);
        const auto* b = static_cast<const TensorTypeNode*>(rhs);
        if (a->dtype != b->dtype) {
          Fail(lhs, rhs, AddStep(path, "dtype", -1),
               absl::StrCat(DataTypeName(a->dtype), " vs ", DataTypeName(b->dtype)));
          return;
        }
        if (a->shape.size() != b->shape.size()) {
          Fail(lhs, rhs, AddStep(path, "shape", -1),
               absl::StrCat("rank ", a->shape.size(), " vs ", b->shape.size()));
          return;
        }
        for (size_t i = 0; i < a->shape.size(); ++i) {
          if (a->shape[i] != b->shape[i]) {
            Fail(lhs, rhs, AddStep(path, "shape", i),
                 absl::StrCat(DimToString(a->shape[i]), " vs ", DimToString(b->shape[i])));
            return;
          }
        }
        return;
      }
      case ObjectKind::kTupleType: {
        const auto* a = static_cast<const TupleTypeNode*>(lhs);
        const auto* b = static_cast<const TupleTypeNode*>(rhs);
        if (a->fields.size() != b->fields.size()) {
          Fail(lhs, rhs, path,
               absl::StrCat("tuple type of ", a->fields.size(), " vs ", b->fields.size(),
                            " fields"));
          return;
        }
        for (size_t i = a->fields.size(); i-- > 0;) {
          Push(a->fields[i].get(), b->fields[i].get(), path, "fields", i);
        }
        return;
      }
      case ObjectKind::kFuncType: {
        const auto* a = static_cast<const FuncTypeNode*>(lhs);
        const auto* b = static_cast<const FuncTypeNode*>(rhs);
        if (a->arg_types.size() != b->arg_types.size()) {
          Fail(lhs, rhs, path,
               absl::StrCat("function type of ", a->arg_types.size(), " vs ",
                            b->arg_types.size(), " arguments"));
          return;
        }
        Push(a->ret_type.get(), b->ret_type.get(), path, "ret_type");
        for (size_t i = a->arg_types.size(); i-- > 0;) {
          Push(a->arg_types[i].get(), b->arg_types[i].get(), path, "arg_types", i);
        }
        return;
      }
      default:
        return;
    }
  }

  bool CompareAttrs(const Attrs& a, const Attrs& b, const Object* lhs, const Object* rhs,
                    int path) {
    if (AttrsEqual(a, b)) return true;
    size_t na = a ? a->fields.size() : 0;
    size_t nb = b ? b->fields.size() : 0;
    for (size_t i = 0; i < std::min(na, nb); ++i) {
      const auto& [ka, va] = a->fields[i];
      const auto& [kb, vb] = b->fields[i];
      if (ka != kb) {
        return Fail(lhs, rhs, AddStep(path, "", i), absl::StrCat("key ", ka, " vs ", kb));
      }
      if (va != vb) {
        return Fail(lhs, rhs, AddStep(path, "", -1, ka), "attribute values differ");
      }
    }
    return Fail(lhs, rhs, path, absl::StrCat(na, " vs ", nb, " attributes"));
  }

  bool CompareCommon(const ExprNode* lhs, const ExprNode* rhs, int path) {
    if (options_.compare_spans && !SpanEqual(lhs->span, rhs->span)) {
      auto names = [](const Span& s) {
        std::string out;
        for (const std::string& n : SpanSourceNames(s)) absl::StrAppend(&out, out.empty() ? "" : ",", n);
        return out.empty() ? std::string("<none>") : out;
      };
      return Fail(lhs, rhs, AddStep(path, "span", -1),
                  absl::StrCat("span ", names(lhs->span), " vs ", names(rhs->span)));
    }
    if (options_.compare_all_virtual_devices) return CompareVirtualDevice(lhs, rhs, path);
    return true;
  }

  bool CompareVirtualDevice(const ExprNode* lhs, const ExprNode* rhs, int path) {
    if (VirtualDeviceEqual(lhs->virtual_device, rhs->virtual_device)) return true;
    return Fail(lhs, rhs, AddStep(path, "virtual_device", -1), "virtual devices differ");
  }

  // Binds lhs var to rhs var (a definition site) and compares what a
  // definition carries: annotation, device, span.
  bool DefineVar(const VarNode* lhs, const VarNode* rhs, int path) {
    auto [it, inserted] = var_map_.emplace(lhs, rhs);
    if (!inserted && it->second != rhs) {
      return Fail(lhs, rhs, path, "variable bound twice to different variables");
    }
    auto [rit, rinserted] = reverse_var_map_.emplace(rhs, lhs);
    if (!rinserted && rit->second != lhs) {
      return Fail(lhs, rhs, path, "variable bound twice to different variables");
    }
    if (!CompareCommon(lhs, rhs, path) || !CompareVirtualDevice(lhs, rhs, path)) return false;
    Push(lhs->type_annotation.get(), rhs->type_annotation.get(), path, "type_annotation");
    return true;
  }

  void CompareVarUse(const VarNode* lhs, const VarNode* rhs, int path) {
    auto it = var_map_.find(lhs);
    if (it != var_map_.end()) {
      if (it->second != rhs) Fail(lhs, rhs, path, "different variables");
      return;
    }
    if (reverse_var_map_.count(rhs)) {
      Fail(lhs, rhs, path, "different variables");
      return;
    }
    if (!options_.map_free_vars) {
      Fail(lhs, rhs, path, "different free variables");
      return;
    }
    DefineVar(lhs, rhs, path);
  }

  void CompareExpr(const ExprNode* lhs, const ExprNode* rhs, int path) {
    if (lhs->kind() != ObjectKind::kVar && !CompareCommon(lhs, rhs, path)) return;
    switch (lhs->kind()) {
      case ObjectKind::kVar:
        return CompareVarUse(static_cast<const VarNode*>(lhs), static_cast<const VarNode*>(rhs),
                             path);
      case ObjectKind::kGlobalVar: {
        const auto& a = static_cast<const GlobalVarNode*>(lhs)->name_hint;
        const auto& b = static_cast<const GlobalVarNode*>(rhs)->name_hint;
        if (a != b) Fail(lhs, rhs, path, absl::StrCat("@", a, " vs @", b));
        return;
      }
      case ObjectKind::kOp: {
        const auto& a = static_cast<const OpNode*>(lhs)->name;
        const auto& b = static_cast<const OpNode*>(rhs)->name;
        if (a != b) Fail(lhs, rhs, path, absl::StrCat("operator ", a, " vs ", b));
        return;
      }
      case ObjectKind::kConstant: {
        const TensorData& a = static_cast<const ConstantNode*>(lhs)->data;
        const TensorData& b = static_cast<const ConstantNode*>(rhs)->data;
        if (a.same_as(b)) return;
        if (a->dtype != b->dtype || a->shape != b->shape) {
          Fail(lhs, rhs, path, "constants differ in dtype or shape");
        } else if (a->bytes != b->bytes) {
          Fail(lhs, rhs, path, "constants differ in value");
        }
        return;
      }
      case ObjectKind::kCall: {
        const auto* a = static_cast<const CallNode*>(lhs);
        const auto* b = static_cast<const CallNode*>(rhs);
        if (a->args.size() != b->args.size()) {
          Fail(lhs, rhs, AddStep(path, "args", -1),
               absl::StrCat(a->args.size(), " vs ", b->args.size(), " arguments"));
          return;
        }
        // Attributes are scalars, checked before the children are pushed.
        if (!CompareAttrs(a->attrs, b->attrs, a, b, AddStep(path, "attrs", -1))) return;
        for (size_t i = a->args.size(); i-- > 0;) {
          Push(a->args[i].get(), b->args[i].get(), path, "args", i);
        }
        Push(a->op.get(), b->op.get(), path, "op");
        return;
      }
      case ObjectKind::kTuple: {
        const auto* a = static_cast<const TupleNode*>(lhs);
        const auto* b = static_cast<const TupleNode*>(rhs);
        if (a->elements.size() != b->elements.size()) {
          Fail(lhs, rhs, path,
               absl::StrCat("tuple of ", a->elements.size(), " vs ", b->elements.size(),
                            " fields"));
          return;
        }
        for (size_t i = a->elements.size(); i-- > 0;) {
          Push(a->elements[i].get(), b->elements[i].get(), path, "fields", i);
        }
        return;
      }
      case ObjectKind::kTupleGetItem: {
        const auto* a = static_cast<const TupleGetItemNode*>(lhs);
        const auto* b = static_cast<const TupleGetItemNode*>(rhs);
        if (a->index != b->index) {
          Fail(lhs, rhs, AddStep(path, "index", -1),
               absl::StrCat("index ", a->index, " vs ", b->index));
          return;
        }
        Push(a->tuple.get(), b->tuple.get(), path, "tuple");
        return;
      }
      case ObjectKind::kLet: {
        const auto* a = static_cast<const LetNode*>(lhs);
        const auto* b = static_cast<const LetNode*>(rhs);
        Push(a->body.get(), b->body.get(), path, "body");
        Push(a->value.get(), b->value.get(), path, "value");
        DefineVar(a->var.get(), b->var.get(), AddStep(path, "var", -1));
        return;
      }
      case ObjectKind::kIf: {
        const auto* a = static_cast<const IfNode*>(lhs);
        const auto* b = static_cast<const IfNode*>(rhs);
        Push(a->false_branch.get(), b->false_branch.get(), path, "false_branch");
        Push(a->true_branch.get(), b->true_branch.get(), path, "true_branch");
        Push(a->cond.get(), b->cond.get(), path, "cond");
        return;
      }
      case ObjectKind::kFunction: {
        const auto* a = static_cast<const FunctionNode*>(lhs);
        const auto* b = static_cast<const FunctionNode*>(rhs);
        if (a->params.size() != b->params.size()) {
          Fail(lhs, rhs, AddStep(path, "params", -1),
               absl::StrCat(a->params.size(), " vs ", b->params.size(), " parameters"));
          return;
        }
        if (!CompareVirtualDevice(a, b, path)) return;
        if (!CompareAttrs(a->attrs, b->attrs, lhs, rhs, AddStep(path, "attrs", -1))) return;
        Push(a->body.get(), b->body.get(), path, "body");
        Push(a->ret_type.get(), b->ret_type.get(), path, "ret_type");
        // Definitions are processed now, so the first parameter's annotation
        // is compared first (pushed last).
        for (size_t i = a->params.size(); i-- > 0;) {
          if (!DefineVar(a->params[i].get(), b->params[i].get(), AddStep(path, "params", i))) {
            return;
          }
        }
        return;
      }
      case ObjectKind::kPrimFunc:
        // Loop functions compare by identity for now (the same node was returned above).
        Fail(lhs, rhs, path, "different PrimFunc objects (loop functions compare by identity)");
        return;
      default:
        Fail(lhs, rhs, path, absl::StrCat("cannot compare ", ObjectKindName(lhs->kind())));
    }
  }

  const StructuralEqualOptions& options_;
  std::vector<Task> stack_;
  std::vector<PathStep> path_;
  std::deque<std::string> global_names_;  // stable addresses for path steps
  std::unordered_set<std::pair<const Object*, const Object*>, PairHash> done_;
  std::unordered_map<const VarNode*, const VarNode*> var_map_;
  std::unordered_map<const VarNode*, const VarNode*> reverse_var_map_;
  const Object* current_lhs_ = nullptr;
  const Object* current_rhs_ = nullptr;

  bool failed_ = false;
  const Object* fail_lhs_ = nullptr;
  const Object* fail_rhs_ = nullptr;
  int fail_path_ = -1;
  std::string fail_reason_;
};

}  // namespace

std::optional<StructuralMismatch> FindFirstMismatch(const ObjectRef& lhs, const ObjectRef& rhs,
                                                    const StructuralEqualOptions& options) {
  StructuralComparer comparer(options);
  return comparer.Run(lhs, rhs);
}

}  // namespace kiln
