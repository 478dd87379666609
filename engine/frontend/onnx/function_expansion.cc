// Function-body expansion of ONNX nodes (function_expansion.h), through libonnx's schemas.
#include "engine/frontend/onnx/function_expansion.h"

#include <onnx/defs/function.h>
#include <onnx/defs/schema.h>

#include <exception>
#include <set>

#include "absl/strings/str_cat.h"
#include "engine/ir/type.h"

namespace kiln::onnx_frontend {
namespace {

const onnx::OpSchema* FindSchema(const std::string& op_type, int64_t opset) {
  return onnx::OpSchemaRegistry::Schema(op_type, static_cast<int>(opset), "");
}

// Kiln dtype -> ONNX TensorProto.DataType (0, UNDEFINED, for none).
int32_t OnnxElementType(DataType dtype) {
  switch (dtype) {
    case DataType::kFloat32: return onnx::TensorProto::FLOAT;
    case DataType::kUInt8: return onnx::TensorProto::UINT8;
    case DataType::kInt8: return onnx::TensorProto::INT8;
    case DataType::kUInt16: return onnx::TensorProto::UINT16;
    case DataType::kInt16: return onnx::TensorProto::INT16;
    case DataType::kInt32: return onnx::TensorProto::INT32;
    case DataType::kInt64: return onnx::TensorProto::INT64;
    case DataType::kBool: return onnx::TensorProto::BOOL;
    case DataType::kFloat16: return onnx::TensorProto::FLOAT16;
    case DataType::kFloat64: return onnx::TensorProto::DOUBLE;
    case DataType::kUInt32: return onnx::TensorProto::UINT32;
    case DataType::kUInt64: return onnx::TensorProto::UINT64;
    case DataType::kBFloat16: return onnx::TensorProto::BFLOAT16;
    default: return onnx::TensorProto::UNDEFINED;
  }
}

onnx::TypeProto OnnxType(const Type& type) {
  onnx::TypeProto proto;
  const auto* tensor = type.defined() ? type.as<TensorTypeNode>() : nullptr;
  if (tensor == nullptr) return proto;
  onnx::TypeProto::Tensor* out = proto.mutable_tensor_type();
  out->set_elem_type(OnnxElementType(tensor->dtype));
  onnx::TensorShapeProto* shape = out->mutable_shape();
  for (const Dim& d : tensor->shape) {
    onnx::TensorShapeProto::Dimension* dim = shape->add_dim();
    if (d.is_static()) dim->set_dim_value(d.value);
  }
  return proto;
}

}  // namespace

bool HasFunctionBody(const std::string& op_type, int64_t opset) {
  const onnx::OpSchema* schema = FindSchema(op_type, opset);
  return schema != nullptr && (schema->HasFunction() || schema->HasContextDependentFunction());
}

std::vector<std::string> FunctionBodyOpTypes() {
  std::set<std::string> names;
  for (const onnx::OpSchema& schema : onnx::OpSchemaRegistry::get_all_schemas()) {
    if (!schema.domain().empty() && schema.domain() != "ai.onnx") continue;
    if (schema.HasFunction() || schema.HasContextDependentFunction()) names.insert(schema.Name());
  }
  return std::vector<std::string>(names.begin(), names.end());
}

absl::StatusOr<ExpandedNode> ExpandFunctionNode(const onnx::NodeProto& node, int64_t opset,
                                                const std::vector<Type>& input_types,
                                                const std::string& prefix) {
  const onnx::OpSchema* schema = FindSchema(node.op_type(), opset);
  if (schema == nullptr) {
    return absl::UnimplementedError(
        absl::StrCat(node.op_type(), " has no ONNX schema at opset ", opset));
  }
  // The node against its schema first (required inputs present, attributes of the declared
  // types): the body builders assume it. libonnx reports a mismatch by throwing.
  try {
    schema->Verify(node);
  } catch (const std::exception& e) {
    return absl::InvalidArgumentError(
        absl::StrCat(node.op_type(), " does not match its ONNX schema: ", e.what()));
  }
  onnx::FunctionProto function;
  if (schema->HasFunction()) {
    function = *schema->GetFunction();
  } else if (schema->HasContextDependentFunction()) {
    std::vector<onnx::TypeProto> types;
    for (const Type& type : input_types) types.push_back(OnnxType(type));
    onnx::FunctionBodyBuildContextImpl context(node, types);
    bool built = false;
    try {
      built = schema->BuildContextDependentFunction(context, function);
    } catch (const std::exception& e) {
      return absl::InvalidArgumentError(absl::StrCat(
          "ONNX could not build the function body of ", node.op_type(), ": ", e.what()));
    }
    if (!built) {
      return absl::InvalidArgumentError(
          absl::StrCat("ONNX could not build the function body of ", node.op_type(),
                       " for this node's attributes and input types"));
    }
  } else {
    return absl::UnimplementedError(
        absl::StrCat(node.op_type(), " has no function body at opset ", opset));
  }
  ExpandedNode expanded;
  expanded.opset = schema->SinceVersion();
  for (const onnx::OperatorSetIdProto& import : function.opset_import()) {
    if (import.domain().empty() || import.domain() == "ai.onnx") expanded.opset = import.version();
  }
  try {
    onnx::FunctionExpandHelper(node, function, expanded.body, prefix);
  } catch (const std::exception& e) {
    return absl::InvalidArgumentError(
        absl::StrCat("ONNX could not expand the function body of ", node.op_type(), ": ", e.what()));
  }
  // An optional attribute the node leaves out and the schema gives no default reaches the body
  // as an attribute of type UNDEFINED (libonnx 1.12 copies the schema's empty default): it means
  // "absent" (SoftmaxCrossEntropyLoss without ignore_index must not ignore class 0).
  for (onnx::NodeProto& inner : *expanded.body.mutable_node()) {
    auto* attributes = inner.mutable_attribute();
    for (int k = attributes->size() - 1; k >= 0; --k) {
      if (attributes->Get(k).type() == onnx::AttributeProto::UNDEFINED) attributes->DeleteSubrange(k, 1);
    }
  }
  return expanded;
}

}  // namespace kiln::onnx_frontend
