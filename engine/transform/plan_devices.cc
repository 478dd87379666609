// PlanDevices: collect constraints over device domains with a union-find (one
// post-order walk per function, no recursion along dataflow), default the
// free domains, then rebuild every expression with its domain's device,
// replacing on_device annotations by their argument (or a device_copy).
#include "engine/transform/plan_devices.h"

#include <unordered_map>
#include <vector>

#include "absl/strings/str_cat.h"
#include "engine/ir/expr_visitor.h"
#include "engine/support/status_macros.h"
#include "engine/transform/device_util.h"

namespace kiln::transform {
namespace {

class DeviceDomains {
 public:
  int DomainOf(const ExprNode* node) {
    auto [it, inserted] = domain_.emplace(node, static_cast<int>(parent_.size()));
    if (inserted) {
      parent_.push_back(it->second);
      device_.emplace_back();
    }
    return it->second;
  }
  int Find(int d) {
    while (parent_[d] != d) {
      parent_[d] = parent_[parent_[d]];
      d = parent_[d];
    }
    return d;
  }
  absl::Status Fix(const ExprNode* node, const VirtualDevice& device, const ExprNode* culprit) {
    if (IsFullyUnconstrained(device)) return absl::OkStatus();
    int root = Find(DomainOf(node));
    if (IsFullyUnconstrained(device_[root])) {
      device_[root] = device;
      return absl::OkStatus();
    }
    return Check(device_[root], device, culprit);
  }
  absl::Status Unify(const ExprNode* a, const ExprNode* b, const ExprNode* culprit) {
    int ra = Find(DomainOf(a));
    int rb = Find(DomainOf(b));
    if (ra == rb) return absl::OkStatus();
    if (!IsFullyUnconstrained(device_[ra]) && !IsFullyUnconstrained(device_[rb])) {
      KILN_RETURN_IF_ERROR(Check(device_[ra], device_[rb], culprit));
    }
    if (IsFullyUnconstrained(device_[rb])) device_[rb] = device_[ra];
    parent_[ra] = rb;
    return absl::OkStatus();
  }
  // The device of `node`'s domain, `fallback` when unconstrained.
  VirtualDevice Resolve(const ExprNode* node, const VirtualDevice& fallback) {
    auto it = domain_.find(node);
    if (it == domain_.end()) return nullptr;
    const VirtualDevice& device = device_[Find(it->second)];
    return IsFullyUnconstrained(device) ? fallback : device;
  }

 private:
  static absl::Status Check(const VirtualDevice& have, const VirtualDevice& want,
                            const ExprNode* culprit) {
    if (VirtualDeviceEqual(have, want)) return absl::OkStatus();
    return absl::InvalidArgumentError(
        absl::StrCat("conflicting virtual devices at ", DescribeDeviceNode(culprit), ": ",
                     DeviceToString(have), " vs ", DeviceToString(want)));
  }

  std::unordered_map<const ExprNode*, int> domain_;
  std::vector<int> parent_;
  std::vector<VirtualDevice> device_;
};

class ConstraintCollector {
 public:
  ConstraintCollector(const IRModule& module, DeviceDomains& domains)
      : module_(module), domains_(domains) {}

  absl::Status Collect(const Function& func) {
    // Let-bound function literals, for calls through their variables.
    PostOrderVisit(func, [&](const Expr& expr) {
      if (const auto* let = expr.as<LetNode>()) {
        if (const auto* value = let->value.as<FunctionNode>()) bound_[let->var.get()] = value;
      }
    });
    absl::Status status;
    PostOrderVisit(func, [&](const Expr& expr) {
      if (status.ok()) status = Visit(expr.get());
    });
    return status;
  }

 private:
  const FunctionNode* Callee(const Expr& op) const {
    return transform::Callee(op, module_, bound_);
  }

  absl::Status VisitCall(const CallNode* call) {
    if (IsOp(call->op, OnDeviceOp())) {
      const ExprNode* arg = call->args[0].get();
      VirtualDevice device = DeviceFromAttrs(call->attrs, "");
      bool result = BoolAttr(call->attrs, "constrain_result", true);
      bool body = BoolAttr(call->attrs, "constrain_body", true);
      if (IsFullyUnconstrained(device) || (result && body)) {
        KILN_RETURN_IF_ERROR(domains_.Unify(call, arg, call));
      }
      if (body) KILN_RETURN_IF_ERROR(domains_.Fix(arg, device, call));
      if (result) KILN_RETURN_IF_ERROR(domains_.Fix(call, device, call));
      return absl::OkStatus();
    }
    if (IsOp(call->op, DeviceCopyOp())) {
      KILN_RETURN_IF_ERROR(domains_.Fix(call->args[0].get(), DeviceFromAttrs(call->attrs, "src_"),
                                        call));
      domains_.DomainOf(call);
      return domains_.Fix(call, DeviceFromAttrs(call->attrs, "dst_"), call);
    }
    if (call->op.as<OpNode>()) {
      domains_.DomainOf(call);
      for (const Expr& arg : call->args) KILN_RETURN_IF_ERROR(domains_.Unify(arg.get(), call, call));
      return absl::OkStatus();
    }
    const FunctionNode* callee = Callee(call->op);
    if (callee != nullptr && callee->params.size() == call->args.size()) {
      for (size_t i = 0; i < call->args.size(); ++i) {
        KILN_RETURN_IF_ERROR(
            domains_.Unify(call->args[i].get(), callee->params[i].get(), call->args[i].get()));
      }
      return domains_.Unify(call, callee, call);
    }
    // A call of a function-typed parameter: everything on the call's device.
    domains_.DomainOf(call);
    for (const Expr& arg : call->args) KILN_RETURN_IF_ERROR(domains_.Unify(arg.get(), call, call));
    return absl::OkStatus();
  }

  absl::Status Visit(const ExprNode* node) {
    switch (node->kind()) {
      case ObjectKind::kOp:
      case ObjectKind::kGlobalVar:
        return absl::OkStatus();
      case ObjectKind::kVar:
        domains_.DomainOf(node);
        return domains_.Fix(node, node->virtual_device, node);
      case ObjectKind::kConstant:
        domains_.DomainOf(node);
        return absl::OkStatus();
      case ObjectKind::kCall:
        return VisitCall(static_cast<const CallNode*>(node));
      case ObjectKind::kTuple:
        domains_.DomainOf(node);
        for (const Expr& e : static_cast<const TupleNode*>(node)->elements) {
          KILN_RETURN_IF_ERROR(domains_.Unify(e.get(), node, node));
        }
        return absl::OkStatus();
      case ObjectKind::kTupleGetItem:
        return domains_.Unify(static_cast<const TupleGetItemNode*>(node)->tuple.get(), node, node);
      case ObjectKind::kLet: {
        const auto* let = static_cast<const LetNode*>(node);
        KILN_RETURN_IF_ERROR(domains_.Unify(let->value.get(), let->var.get(), let->var.get()));
        return domains_.Unify(let->body.get(), node, node);
      }
      case ObjectKind::kIf: {
        const auto* branch = static_cast<const IfNode*>(node);
        KILN_RETURN_IF_ERROR(domains_.Unify(branch->cond.get(), node, node));
        KILN_RETURN_IF_ERROR(domains_.Unify(branch->true_branch.get(), node, node));
        return domains_.Unify(branch->false_branch.get(), node, node);
      }
      case ObjectKind::kFunction: {
        const auto* func = static_cast<const FunctionNode*>(node);
        KILN_RETURN_IF_ERROR(domains_.Unify(func->body.get(), node, node));
        return domains_.Fix(node, node->virtual_device, node);
      }
      default:
        return absl::OkStatus();
    }
  }

  const IRModule& module_;
  DeviceDomains& domains_;
  std::unordered_map<const VarNode*, const FunctionNode*> bound_;
};

class PlannedRewriter : public DeviceAssigner {
 public:
  explicit PlannedRewriter(DeviceOf device_of) : DeviceAssigner(std::move(device_of)) {}
  const absl::Status& status() const { return status_; }

 protected:
  Result Rewrite_(const CallNode* pre, const Expr& post) override {
    if (!AsCallOf(post, OnDeviceOp())) return Assign(pre, post);
    // The annotation goes; its argument stays, copied when the two sides differ.
    const Expr& arg = post.as<CallNode>()->args[0];
    VirtualDevice device = device_of_(pre);
    if (VirtualDeviceEqual(arg->virtual_device, device)) return arg;
    absl::StatusOr<Expr> copy = MakeDeviceCopy(arg, arg->virtual_device, device, pre->span);
    if (!copy.ok()) {
      if (status_.ok()) status_ = copy.status();
      return arg;
    }
    return *copy;
  }
  using DeviceAssigner::Rewrite_;

 private:
  absl::Status status_;
};

}  // namespace

Pass PlanDevices(std::string default_device_type) {
  return CreateModulePass(
      [default_device_type](const IRModule& module, PassContext&) -> absl::StatusOr<IRModule> {
        DeviceDomains domains;
        ConstraintCollector collector(module, domains);
        for (const auto& [name, base] : module->functions) {
          const auto* func = base.as<FunctionNode>();
          if (func == nullptr) continue;
          absl::Status status = collector.Collect(Function(func));
          if (!status.ok()) {
            return absl::Status(status.code(),
                                absl::StrCat("in @", name->name_hint, ": ", status.message()));
          }
        }
        VirtualDevice fallback = MakeVirtualDevice(default_device_type);
        std::vector<IRModuleNode::Entry> functions;
        for (const auto& [name, base] : module->functions) {
          if (!base.as<FunctionNode>()) {
            functions.emplace_back(name, base);
            continue;
          }
          PlannedRewriter rewriter(
              [&](const ExprNode* node) { return domains.Resolve(node, fallback); });
          Expr planned = rewriter.VisitExpr(base);
          KILN_RETURN_IF_ERROR(rewriter.status());
          functions.emplace_back(name, Downcast<BaseFuncNode>(planned));
        }
        return MakeModule(std::move(functions), module->attrs);
      },
      PassInfo{"PlanDevices", 0, {"InferType"}, PassStage::kGraph});
}

}  // namespace kiln::transform
