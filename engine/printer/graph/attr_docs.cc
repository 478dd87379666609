// Attribute values, shapes and virtual devices as Docs (docs/graph-text-format.md "Attribute
// values" and "Virtual devices").
#include <string>
#include <vector>

#include "engine/ir/virtual_device.h"
#include "engine/printer/graph/graph_builders.h"

namespace kiln::printer::graph {

ExprDoc ShapeDoc(const std::vector<Dim>& dims, bool bare_singleton) {
  std::vector<ExprDoc> elements;
  elements.reserve(dims.size());
  for (const Dim& dim : dims) {
    if (dim.is_static()) {
      elements.push_back(IntLiteral(dim.value));
    } else {
      elements.push_back(Id(dim.symbol.empty() ? "?" : dim.symbol));
    }
  }
  auto tuple = std::make_shared<TupleDocNode>(std::move(elements));
  tuple->bare_singleton = bare_singleton;
  return tuple;
}

std::shared_ptr<IndexDocNode> TensorTypeDoc(const std::vector<Dim>& dims, DataType dtype) {
  return std::make_shared<IndexDocNode>(
      Id("Tensor"), std::vector<ExprDoc>{ShapeDoc(dims, /*bare_singleton=*/true),
                                         Id(std::string(DataTypeName(dtype)))});
}

ExprDoc AttrValueDoc(const AttrValue& value) {
  if (value.is<int64_t>()) return IntLiteral(value.get<int64_t>());
  if (value.is<double>()) return FloatLiteral(value.get<double>());
  if (value.is<bool>()) return BoolLiteral(value.get<bool>());
  if (value.is<std::string>()) return StringLiteral(value.get<std::string>());
  if (value.is<DataType>()) return Id(std::string(DataTypeName(value.get<DataType>())));
  if (value.is<ShapeValue>()) return ShapeDoc(value.get<ShapeValue>().dims, false);
  std::vector<ExprDoc> elements;
  for (const AttrValue& element : value.get<AttrValue::Array>()) {
    elements.push_back(AttrValueDoc(element));
  }
  return std::make_shared<ListDocNode>(std::move(elements));
}

void AppendAttrKwargs(const Attrs& attrs, CallDocNode* call) {
  if (!attrs) return;
  for (const auto& [key, value] : attrs->fields) {
    call->kwargs_keys.push_back(key);
    call->kwargs_values.push_back(AttrValueDoc(value));
  }
}

std::vector<AssignDoc> AttrArgs(const Attrs& attrs) {
  std::vector<AssignDoc> args;
  if (!attrs) return args;
  for (const auto& [key, value] : attrs->fields) {
    args.push_back(std::make_shared<AssignDocNode>(Id(key), AttrValueDoc(value), nullptr));
  }
  return args;
}

Doc BuildVirtualDevice(const ObjectRef& node, IRDocsifier&) {
  const auto* device = node.as<VirtualDeviceNode>();
  auto call = std::make_shared<CallDocNode>(Id("VirtualDevice"), std::vector<ExprDoc>{});
  call->source = node;
  auto add = [&call](const char* key, ExprDoc value) {
    call->kwargs_keys.push_back(key);
    call->kwargs_values.push_back(std::move(value));
  };
  if (!device->device_type.empty()) add("device_type", StringLiteral(device->device_type));
  if (device->device_id >= 0) add("device_id", IntLiteral(device->device_id));
  if (!device->target.empty()) add("target", StringLiteral(device->target));
  if (!device->memory_scope.empty()) add("memory_scope", StringLiteral(device->memory_scope));
  return call;
}

}  // namespace kiln::printer::graph
