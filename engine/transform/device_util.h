// Helpers shared by PlanDevices and DPL (device plan lite): reading virtual
// devices from on_device / device_copy attributes, making device_copy calls,
// naming nodes in errors, and the rebuild that stores a virtual device on
// every expression.
#pragma once

#include <functional>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "engine/ir/expr.h"
#include "engine/ir/expr_mutator.h"

namespace kiln::transform {

inline constexpr char kOnDeviceOp[] = "on_device";
inline constexpr char kDeviceCopyOp[] = "device_copy";

// The call when `expr` is a call of operator `op_name`, else null.
const CallNode* AsOpCall(const Expr& expr, std::string_view op_name);

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

  Expr Rewrite_(const CallNode* pre, const Expr& post) override { return Assign(pre, post); }
  Expr Rewrite_(const TupleNode* pre, const Expr& post) override { return Assign(pre, post); }
  Expr Rewrite_(const TupleGetItemNode* pre, const Expr& post) override {
    return Assign(pre, post);
  }
  Expr Rewrite_(const LetNode* pre, const Expr& post) override { return Assign(pre, post); }
  Expr Rewrite_(const IfNode* pre, const Expr& post) override { return Assign(pre, post); }
  Expr Rewrite_(const FunctionNode* pre, const Expr& post) override { return Assign(pre, post); }
  Expr Rewrite_(const VarNode* pre, const Expr& post) override { return Assign(pre, post); }
  Expr Rewrite_(const ConstantNode* pre, const Expr& post) override { return Assign(pre, post); }

  DeviceOf device_of_;
};

}  // namespace kiln::transform
