// Where a value lives: device type, device id, compilation target and memory
// scope, each of which may be left unconstrained. A null VirtualDevice handle
// and a node with every field unset both mean "fully unconstrained".
#pragma once

#include <string>

#include "engine/ir/object.h"

namespace kiln {

class VirtualDeviceNode final : public Object {
 public:
  static constexpr bool IsKind(ObjectKind k) { return k == ObjectKind::kVirtualDevice; }
  // `device_type` is a name such as "cpu" or "cuda" ("" = unconstrained);
  // `device_id` -1 = unconstrained; empty target / memory scope = unconstrained.
  VirtualDeviceNode(std::string device_type, int device_id, std::string target,
                    std::string memory_scope)
      : Object(ObjectKind::kVirtualDevice),
        device_type(std::move(device_type)),
        device_id(device_id),
        target(std::move(target)),
        memory_scope(std::move(memory_scope)) {}

  const std::string device_type;
  const int device_id;
  const std::string target;
  const std::string memory_scope;
};
using VirtualDevice = Ref<VirtualDeviceNode>;

inline VirtualDevice MakeVirtualDevice(std::string device_type, int device_id = -1,
                                       std::string target = "", std::string memory_scope = "") {
  return MakeRef<VirtualDeviceNode>(std::move(device_type), device_id, std::move(target),
                                    std::move(memory_scope));
}

inline bool IsFullyUnconstrained(const VirtualDevice& device) {
  return !device || (device->device_type.empty() && device->device_id < 0 &&
                     device->target.empty() && device->memory_scope.empty());
}

// Field-wise equality; every unconstrained value equals every other.
inline bool VirtualDeviceEqual(const VirtualDevice& a, const VirtualDevice& b) {
  if (IsFullyUnconstrained(a) || IsFullyUnconstrained(b)) {
    return IsFullyUnconstrained(a) && IsFullyUnconstrained(b);
  }
  return a->device_type == b->device_type && a->device_id == b->device_id &&
         a->target == b->target && a->memory_scope == b->memory_scope;
}

}  // namespace kiln
