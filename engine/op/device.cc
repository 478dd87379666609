// Device annotation operators: on_device (pins a value to a virtual device;
// consumed by PlanDevices) and device_copy (moves a value between devices).
// Both are identity on types and never fused.
#include "absl/strings/str_cat.h"
#include "engine/op/op_families.h"

namespace kiln {
namespace {

absl::StatusOr<Type> SameAsInput(const TypeRelationInput& in) { return in.args[0]; }

// The four virtual device fields as attributes, each name prefixed.
std::vector<AttrField> DeviceFields(const std::string& prefix, const std::string& what) {
  return {
      {prefix + "device_type", AttrKind::kString, AttrValue(""),
       absl::StrCat(what, " device type (\"\" = unconstrained)"), nullptr},
      {prefix + "device_id", AttrKind::kInt, AttrValue(int64_t{-1}),
       absl::StrCat(what, " device id (-1 = unconstrained)"), nullptr},
      {prefix + "target", AttrKind::kString, AttrValue(""),
       absl::StrCat(what, " compilation target (\"\" = unconstrained)"), nullptr},
      {prefix + "memory_scope", AttrKind::kString, AttrValue(""),
       absl::StrCat(what, " memory scope (\"\" = unconstrained)"), nullptr},
  };
}

}  // namespace

void RegisterDeviceOps(OpRegistry& registry) {
  {
    OpEntry entry;
    entry.name = "on_device";
    entry.summary = "annotate a value with the virtual device it lives on (removed by PlanDevices)";
    entry.attrs = DeviceFields("", "the");
    entry.attrs.push_back({"constrain_result", AttrKind::kBool, AttrValue(true),
                           "the annotation's result is on the device", nullptr});
    entry.attrs.push_back({"constrain_body", AttrKind::kBool, AttrValue(true),
                           "the annotated argument is on the device", nullptr});
    entry.relation = SameAsInput;
    entry.pattern = OpPattern::kOpaque;
    entry.non_computational = true;
    registry.Register(std::move(entry));
  }
  {
    OpEntry entry;
    entry.name = "device_copy";
    entry.summary = "copy a value from the src_* virtual device to the dst_* one";
    entry.attrs = DeviceFields("src_", "source");
    for (AttrField& field : DeviceFields("dst_", "destination")) {
      entry.attrs.push_back(std::move(field));
    }
    entry.relation = SameAsInput;
    entry.pattern = OpPattern::kOpaque;
    registry.Register(std::move(entry));
  }
}

}  // namespace kiln
