// Function-body expansion of ONNX nodes (function_expansion.h), through libonnx's schemas.
#include "engine/frontend/onnx/function_expansion.h"

#include <onnx/defs/function.h>
#include <onnx/defs/schema.h>

#include <exception>
#include <map>
#include <set>

#include "absl/strings/str_cat.h"
#include "engine/ir/type.h"
#include "engine/support/status_macros.h"

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
    case DataType::kString: return onnx::TensorProto::STRING;
    default: return onnx::TensorProto::UNDEFINED;
  }
}

onnx::TypeProto OnnxType(const Type& type) {
  onnx::TypeProto proto;
  // A tuple is how Kiln holds a sequence: a sequence of its first element's tensor type (ONNX's
  // body builders read the element type; an empty tuple has none and stays unset).
  if (const auto* tuple = type.defined() ? type.as<TupleTypeNode>() : nullptr) {
    if (!tuple->fields.empty() && tuple->fields[0].as<TensorTypeNode>()) {
      *proto.mutable_sequence_type()->mutable_elem_type() = OnnxType(tuple->fields[0]);
    }
    return proto;
  }
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

// The deepest subgraph nesting RenameCaptured walks (ONNX's bodies nest one Loop deep).
constexpr int kMaxSubgraphDepth = 8;

// libonnx's FunctionExpandHelper renames the body's values in its nodes' inputs and outputs but
// copies subgraph attributes as they are, so a Loop body's reads of the function's inputs and
// internal values would name values that no longer exist. This renames those reads the same
// way: a formal input or output to the node's, an internal value to "Func_<prefix><name>".
// Names a subgraph defines itself (its inputs, initializers, node outputs) shadow outer ones.
absl::Status RenameCaptured(onnx::GraphProto* graph,
                            const std::map<std::string, std::string>& renamed,
                            std::set<std::string> local, int depth) {
  if (depth > kMaxSubgraphDepth) {
    return absl::InvalidArgumentError(
        absl::StrCat("a function body's subgraphs nest more than ", kMaxSubgraphDepth, " deep"));
  }
  for (const onnx::ValueInfoProto& input : graph->input()) local.insert(input.name());
  for (const onnx::TensorProto& init : graph->initializer()) local.insert(init.name());
  for (const onnx::NodeProto& node : graph->node()) {
    for (const std::string& out : node.output()) local.insert(out);
  }
  auto rename = [&](std::string* name) {
    if (local.count(*name)) return;
    auto it = renamed.find(*name);
    if (it != renamed.end()) *name = it->second;
  };
  for (onnx::NodeProto& node : *graph->mutable_node()) {
    for (std::string& input : *node.mutable_input()) rename(&input);
    for (onnx::AttributeProto& attr : *node.mutable_attribute()) {
      if (attr.has_g()) KILN_RETURN_IF_ERROR(RenameCaptured(attr.mutable_g(), renamed, local, depth + 1));
      for (onnx::GraphProto& g : *attr.mutable_graphs()) {
        KILN_RETURN_IF_ERROR(RenameCaptured(&g, renamed, local, depth + 1));
      }
    }
  }
  for (onnx::ValueInfoProto& output : *graph->mutable_output()) rename(output.mutable_name());
  return absl::OkStatus();
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
    // libonnx's builders dereference the types they read unchecked: every input present needs
    // one ONNX can express (a sequence needs an element type), or the expansion is refused.
    std::vector<onnx::TypeProto> types;
    for (size_t i = 0; i < input_types.size(); ++i) {
      types.push_back(OnnxType(input_types[i]));
      if (input_types[i].defined() && types.back().value_case() == onnx::TypeProto::VALUE_NOT_SET) {
        return absl::InvalidArgumentError(absl::StrCat(
            node.op_type(), "'s input ", i, " has a type ONNX's function body builder cannot take "
            "(an empty sequence, or neither a tensor nor a sequence of tensors)"));
      }
    }
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
  std::map<std::string, std::string> renamed;
  for (const onnx::NodeProto& inner : function.node()) {
    for (const std::string& out : inner.output()) renamed[out] = absl::StrCat("Func_", prefix, out);
  }
  for (int i = 0; i < function.input_size(); ++i) {
    renamed[function.input(i)] = i < node.input_size() ? node.input(i) : "";
  }
  for (int i = 0; i < function.output_size(); ++i) {
    renamed[function.output(i)] = i < node.output_size() ? node.output(i) : "";
  }
  for (onnx::NodeProto& inner : *expanded.body.mutable_node()) {
    for (onnx::AttributeProto& attr : *inner.mutable_attribute()) {
      if (attr.has_g()) KILN_RETURN_IF_ERROR(RenameCaptured(attr.mutable_g(), renamed, {}, 1));
      for (onnx::GraphProto& g : *attr.mutable_graphs()) {
        KILN_RETURN_IF_ERROR(RenameCaptured(&g, renamed, {}, 1));
      }
    }
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
