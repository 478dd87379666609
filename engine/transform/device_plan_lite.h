// DPL ("device plan lite"): expands the minimal device representation (the
// critical virtual devices: function parameters, let-bound variables and
// function results, plus the devices in device_copy attributes) into the
// complete one, where every expression carries its virtual device. Simple
// lexical rules, no constraint solving (the virtual-device seed):
//   - a function's body is on the function's result device;
//   - a let's value is on its variable's device; the let's body is on the
//     let's device;
//   - a device_copy's argument is on src, the copy itself on dst;
//   - a call of a function (literal, global, or let-bound variable bound to a
//     literal) puts each argument on the device of the matching parameter;
//   - every other child (operator-call arguments, tuple elements, projected
//     tuples, if conditions and branches) is on its parent's device.
// A missing critical device (a parameter, let variable or function result
// without one) is an error naming it. Rebuilds every expression with its
// device; spans and checked types are kept. Opt level 0.
#pragma once

#include "absl/status/statusor.h"
#include "engine/pass/pass.h"

namespace kiln::transform {

Pass DPL();

// DPL of one module, outside the pass infrastructure.
absl::StatusOr<IRModule> DevicePlanLite(const IRModule& module);

}  // namespace kiln::transform
