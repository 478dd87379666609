// Helpers shared by the device planning passes.
#include "engine/transform/device_util.h"

#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "engine/transform/expr_builder.h"

namespace kiln::transform {

const OpEntry& OnDeviceOp() {
  static const OpEntry& op = OpRegistry::Global().Get(kOnDeviceOp);
  return op;
}

const OpEntry& DeviceCopyOp() {
  static const OpEntry& op = OpRegistry::Global().Get(kDeviceCopyOp);
  return op;
}

namespace {
std::string StringAttr(const Attrs& attrs, const std::string& key) {
  const AttrValue* value = attrs ? attrs->Find(key) : nullptr;
  return value != nullptr && value->is<std::string>() ? value->get<std::string>() : "";
}
}  // namespace

VirtualDevice DeviceFromAttrs(const Attrs& attrs, std::string_view prefix) {
  const std::string p(prefix);
  int device_id = -1;
  if (const AttrValue* id = attrs ? attrs->Find(p + "device_id") : nullptr;
      id != nullptr && id->is<int64_t>()) {
    device_id = static_cast<int>(id->get<int64_t>());
  }
  VirtualDevice device = MakeVirtualDevice(StringAttr(attrs, p + "device_type"), device_id,
                                           StringAttr(attrs, p + "target"),
                                           StringAttr(attrs, p + "memory_scope"));
  return IsFullyUnconstrained(device) ? VirtualDevice() : device;
}

bool BoolAttr(const Attrs& attrs, std::string_view key, bool fallback) {
  const AttrValue* value = attrs ? attrs->Find(key) : nullptr;
  return value != nullptr && value->is<bool>() ? value->get<bool>() : fallback;
}

absl::StatusOr<Expr> MakeDeviceCopy(const Expr& value, const VirtualDevice& src,
                                    const VirtualDevice& dst, Span span) {
  std::vector<AttrsNode::Field> fields;
  for (const auto& [prefix, device] : {std::pair{"src_", src}, std::pair{"dst_", dst}}) {
    const std::string p(prefix);
    fields.emplace_back(p + "device_type", device ? device->device_type : std::string());
    fields.emplace_back(p + "device_id", int64_t{device ? device->device_id : -1});
    fields.emplace_back(p + "target", device ? device->target : std::string());
    fields.emplace_back(p + "memory_scope", device ? device->memory_scope : std::string());
  }
  absl::StatusOr<Expr> call =
      MakeTypedCall(kDeviceCopyOp, {value}, MakeAttrs(std::move(fields)), span);
  if (!call.ok()) return call.status();
  return WithFields(*call, ExprFields{(*call)->span, (*call)->checked_type, dst});
}

std::string DeviceToString(const VirtualDevice& device) {
  if (IsFullyUnconstrained(device)) return "unconstrained";
  std::vector<std::string> parts;
  if (!device->device_type.empty()) parts.push_back(absl::StrCat("device_type=\"", device->device_type, "\""));
  if (device->device_id >= 0) parts.push_back(absl::StrCat("device_id=", device->device_id));
  if (!device->target.empty()) parts.push_back(absl::StrCat("target=\"", device->target, "\""));
  if (!device->memory_scope.empty()) {
    parts.push_back(absl::StrCat("memory_scope=\"", device->memory_scope, "\""));
  }
  return absl::StrCat("VirtualDevice(", absl::StrJoin(parts, ", "), ")");
}

std::string DescribeDeviceNode(const ExprNode* node) {
  std::string what;
  if (node->kind() == ObjectKind::kVar) {
    what = absl::StrCat("%", static_cast<const VarNode*>(node)->name_hint);
  } else if (node->kind() == ObjectKind::kCall) {
    const auto* op = static_cast<const CallNode*>(node)->op.as<OpNode>();
    what = op != nullptr ? op->name : "call";
  } else {
    what = ObjectKindName(node->kind());
  }
  std::vector<std::string> names = SpanSourceNames(node->span);
  if (!names.empty()) absl::StrAppend(&what, " (span ", absl::StrJoin(names, ", "), ")");
  return what;
}

const FunctionNode* Callee(const Expr& op, const IRModule& module,
                           const std::unordered_map<const VarNode*, const FunctionNode*>& bound) {
  if (const auto* func = op.as<FunctionNode>()) return func;
  if (const auto* global = op.as<GlobalVarNode>()) {
    return module->Lookup(global->name_hint).as<FunctionNode>();
  }
  if (const auto* var = op.as<VarNode>()) {
    auto it = bound.find(var);
    return it == bound.end() ? nullptr : it->second;
  }
  return nullptr;
}

Expr DeviceAssigner::Assign(const ExprNode* pre, const Expr& post) const {
  return WithFields(post, ExprFields{post->span, post->checked_type, device_of_(pre)});
}

}  // namespace kiln::transform
