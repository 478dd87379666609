// DPL: a top-down walk with an explicit stack assigns each node the device
// its context implies, then DeviceAssigner rebuilds the functions.
#include "engine/transform/device_plan_lite.h"

#include <unordered_map>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "engine/ir/expr_visitor.h"
#include "engine/support/status_macros.h"
#include "engine/transform/device_util.h"

namespace kiln::transform {
namespace {

class LexicalDevices {
 public:
  explicit LexicalDevices(const IRModule& module) : module_(module) {}

  absl::Status Run(const Function& root, const std::string& name) {
    PostOrderVisit(root, [&](const Expr& expr) {
      if (const auto* let = expr.as<LetNode>()) {
        if (const auto* value = let->value.as<FunctionNode>()) bound_[let->var.get()] = value;
      }
    });
    name_ = name;
    KILN_RETURN_IF_ERROR(Push(root.get(), root->virtual_device));
    while (!stack_.empty()) {
      auto [node, device] = stack_.back();
      stack_.pop_back();
      KILN_RETURN_IF_ERROR(Expand(node, device));
    }
    return absl::OkStatus();
  }

  VirtualDevice DeviceOf(const ExprNode* node) const {
    auto it = device_.find(node);
    return it == device_.end() ? nullptr : it->second;
  }

 private:
  absl::Status Missing(const ExprNode* node, const char* what) const {
    return absl::InvalidArgumentError(absl::StrCat("in @", name_, ": ", what, " ",
                                                   DescribeDeviceNode(node),
                                                   " has no virtual device"));
  }

  // Records `device` for `node` (the first context to reach a shared node
  // wins) and schedules its children.
  absl::Status Push(const ExprNode* node, VirtualDevice device) {
    if (node->kind() == ObjectKind::kOp || node->kind() == ObjectKind::kGlobalVar) {
      return absl::OkStatus();
    }
    if (node->kind() == ObjectKind::kVar) {
      // Uses of a variable are the variable: its own (critical) device. A free
      // variable without one takes its context's.
      device_.emplace(node, IsFullyUnconstrained(node->virtual_device) ? device
                                                                       : node->virtual_device);
      return absl::OkStatus();
    }
    if (node->kind() == ObjectKind::kFunction) {
      // A function's device is its result's; a literal without one takes its
      // context's only where the context knows (a callee or a bound value).
      if (!IsFullyUnconstrained(node->virtual_device)) device = node->virtual_device;
      if (IsFullyUnconstrained(device)) return Missing(node, "the result of function");
    }
    if (!device_.emplace(node, device).second) return absl::OkStatus();
    stack_.emplace_back(node, std::move(device));
    return absl::OkStatus();
  }

  const FunctionNode* Callee(const Expr& op) const {
    return transform::Callee(op, module_, bound_);
  }

  absl::Status Expand(const ExprNode* node, const VirtualDevice& device) {
    switch (node->kind()) {
      case ObjectKind::kFunction: {
        const auto* func = static_cast<const FunctionNode*>(node);
        for (const Var& param : func->params) {
          if (IsFullyUnconstrained(param->virtual_device)) return Missing(param.get(), "parameter");
          device_.emplace(param.get(), param->virtual_device);
        }
        return Push(func->body.get(), device);
      }
      case ObjectKind::kLet: {
        const auto* let = static_cast<const LetNode*>(node);
        if (IsFullyUnconstrained(let->var->virtual_device)) {
          return Missing(let->var.get(), "let variable");
        }
        device_.emplace(let->var.get(), let->var->virtual_device);
        KILN_RETURN_IF_ERROR(Push(let->body.get(), device));
        return Push(let->value.get(), let->var->virtual_device);
      }
      case ObjectKind::kCall: {
        const auto* call = static_cast<const CallNode*>(node);
        if (IsOp(call->op, DeviceCopyOp())) {
          device_[node] = DeviceFromAttrs(call->attrs, "dst_");
          return Push(call->args[0].get(), DeviceFromAttrs(call->attrs, "src_"));
        }
        if (IsOp(call->op, OnDeviceOp())) {
          VirtualDevice inner = DeviceFromAttrs(call->attrs, "");
          return Push(call->args[0].get(), IsFullyUnconstrained(inner) ? device : inner);
        }
        const FunctionNode* callee = call->op.as<OpNode>() ? nullptr : Callee(call->op);
        if (callee != nullptr && callee->params.size() == call->args.size()) {
          for (size_t i = 0; i < call->args.size(); ++i) {
            const VirtualDevice& param = callee->params[i]->virtual_device;
            if (IsFullyUnconstrained(param)) return Missing(callee->params[i].get(), "parameter");
            KILN_RETURN_IF_ERROR(Push(call->args[i].get(), param));
          }
        } else {
          for (const Expr& arg : call->args) KILN_RETURN_IF_ERROR(Push(arg.get(), device));
        }
        return Push(call->op.get(), device);
      }
      case ObjectKind::kTuple:
        for (const Expr& e : static_cast<const TupleNode*>(node)->elements) {
          KILN_RETURN_IF_ERROR(Push(e.get(), device));
        }
        return absl::OkStatus();
      case ObjectKind::kTupleGetItem:
        return Push(static_cast<const TupleGetItemNode*>(node)->tuple.get(), device);
      case ObjectKind::kIf: {
        const auto* branch = static_cast<const IfNode*>(node);
        KILN_RETURN_IF_ERROR(Push(branch->cond.get(), device));
        KILN_RETURN_IF_ERROR(Push(branch->true_branch.get(), device));
        return Push(branch->false_branch.get(), device);
      }
      default:
        return absl::OkStatus();
    }
  }

  const IRModule& module_;
  std::string name_;
  std::unordered_map<const VarNode*, const FunctionNode*> bound_;
  std::unordered_map<const ExprNode*, VirtualDevice> device_;
  std::vector<std::pair<const ExprNode*, VirtualDevice>> stack_;
};

}  // namespace

absl::StatusOr<IRModule> DevicePlanLite(const IRModule& module) {
  std::vector<IRModuleNode::Entry> functions;
  for (const auto& [name, base] : module->functions) {
    const auto* func = base.as<FunctionNode>();
    if (func == nullptr) {
      functions.emplace_back(name, base);
      continue;
    }
    LexicalDevices devices(module);
    KILN_RETURN_IF_ERROR(devices.Run(Function(func), name->name_hint));
    DeviceAssigner assigner([&](const ExprNode* node) { return devices.DeviceOf(node); });
    functions.emplace_back(name, Downcast<BaseFuncNode>(assigner.VisitExpr(base)));
  }
  return MakeModule(std::move(functions), module->attrs);
}

Pass DPL() {
  return CreateModulePass(
      [](const IRModule& module, PassContext&) -> absl::StatusOr<IRModule> {
        return DevicePlanLite(module);
      },
      PassInfo{"DPL", 0, {}, PassStage::kGraph});
}

}  // namespace kiln::transform
