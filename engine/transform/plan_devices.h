// PlanDevices: gives every sub-expression of every function one virtual
// device, from the constraints the program states (the seeds' device planner).
#pragma once

#include <string>

#include "engine/pass/pass.h"

namespace kiln::transform {

// Constraints, solved by unification over device domains (one per value):
//   - on_device(x, <device>) puts x (constrain_body) and the annotation's
//     result (constrain_result) on the device; the annotation is removed;
//   - device_copy(x, src_*, dst_*) puts x on src and its result on dst;
//   - a parameter, let variable or function result with a virtual device is
//     on that device;
//   - an operator call's arguments are on the call's device; a call of a
//     function (literal, global, or let-bound variable bound to a literal)
//     puts its arguments on the parameters' devices and its result on the
//     function's result device; tuples, projections, if (condition too) and
//     let bodies share their parent's device; a let value shares its variable's.
// Domains nothing constrains get the default device
// VirtualDevice(device_type=`default_device_type`). Where an on_device with
// one side unconstrained separates two different devices, a device_copy is
// inserted. Two different devices required of one domain are an error naming
// the node (and its span). Devices compare field-wise (no partial joins).
//
// Every expression is rebuilt with its device (spans and checked types kept;
// Op and GlobalVar handles untouched). Opt level 0; requires InferType.
Pass PlanDevices(std::string default_device_type = "cpu");

}  // namespace kiln::transform
