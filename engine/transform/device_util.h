// Helpers shared by PlanDevices and DPL (device plan lite): reading virtual
// devices from on_device / device_copy attributes, making device_copy calls,
// naming nodes in errors, and the rebuild that stores a virtual device on
// every expression.
#pragma once

#include <functional>
#include <string>
#include <string_view>
#include <unordered_map>

#include "absl/status/statusor.h"
#include "engine/ir/expr.h"
#include "engine/ir/expr_mutator.h"
#include "engine/ir/module.h"
#include "engine/op/op_registry.h"

namespace kiln::transform {

inline constexpr char kOnDeviceOp[] = "on_device";
inline constexpr char kDeviceCopyOp[] = "device_copy";

// The registry entries of on_device and device_copy, looked up once: match
// calls of them with AsCallOf(expr, OnDeviceOp()).
const OpEntry& OnDeviceOp();
const OpEntry& DeviceCopyOp();

// The device in attributes `<prefix>device_type`, `<prefix>device_id`,
// `<prefix>target`, `<prefix>memory_scope` (missing keys are unconstrained).
// Null when fully unconstrained.
VirtualDevice DeviceFromAttrs(const Attrs& attrs, std::string_view prefix);
// A bool attribute, `fallback` when absent.
bool BoolAttr(const Attrs& attrs, std::string_view key, bool fallback);

// A typed device_copy(value) from `src` to `dst`, its virtual device `dst`.
absl::StatusOr<Expr> MakeDeviceCopy(const Expr& value, const VirtualDevice& src,
                                    const VirtualDevice& dst, Span span);

// `VirtualDevice(device_type="cuda", device_id=0)`, or `unconstrained`.
std::string DeviceToString(const VirtualDevice& device);
// `%x`, `add (span a, b)`, `Function`: what errors call a node.
std::string DescribeDeviceNode(const ExprNode* node);

// The function a call of `op` runs: `op` itself when a function literal, the global function it
// names in `module`, or the literal `bound` holds for a let-bound variable; null otherwise (an
// operator, a parameter).
const FunctionNode* Callee(const Expr& op, const IRModule& module,
                           const std::unordered_map<const VarNode*, const FunctionNode*>& bound);

// Rebuilds every expression (Op and GlobalVar handles excepted) with the
// virtual device `device_of(original node)`, keeping spans and checked types.
// Variables are rebuilt once and every use sees the rebuilt variable.
// Iterative along dataflow (ExprMutator).
class DeviceAssigner : public PostOrderRewriter {
 public:
  using DeviceOf = std::function<VirtualDevice(const ExprNode*)>;
  explicit DeviceAssigner(DeviceOf device_of) : device_of_(std::move(device_of)) {}

 protected:
  Expr Assign(const ExprNode* pre, const Expr& post) const;

  Result Rewrite_(const CallNode* pre, const Expr& post) override { return Assign(pre, post); }
  Result Rewrite_(const TupleNode* pre, const Expr& post) override { return Assign(pre, post); }
  Result Rewrite_(const TupleGetItemNode* pre, const Expr& post) override {
    return Assign(pre, post);
  }
  Result Rewrite_(const LetNode* pre, const Expr& post) override { return Assign(pre, post); }
  Result Rewrite_(const IfNode* pre, const Expr& post) override { return Assign(pre, post); }
  Result Rewrite_(const FunctionNode* pre, const Expr& post) override {
    return Assign(pre, post);
  }
  Result Rewrite_(const VarNode* pre, const Expr& post) override { return Assign(pre, post); }
  Result Rewrite_(const ConstantNode* pre, const Expr& post) override {
    return Assign(pre, post);
  }

  DeviceOf device_of_;
};

}  // namespace kiln::transform
