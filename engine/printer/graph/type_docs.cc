// Types as Docs: `Tensor[(1, 3), float32]`, `(T, T)`, `fn (T) -> T`.
#include <vector>

#include "engine/printer/graph/graph_builders.h"

namespace kiln::printer::graph {

Doc BuildTensorType(const ObjectRef& node, IRDocsifier&) {
  const auto* type = node.as<TensorTypeNode>();
  auto doc = TensorTypeDoc(type->shape, type->dtype);
  doc->source = node;
  return doc;
}

Doc BuildTupleType(const ObjectRef& node, IRDocsifier& d) {
  const auto* type = node.as<TupleTypeNode>();
  std::vector<ExprDoc> fields;
  fields.reserve(type->fields.size());
  for (const Type& field : type->fields) fields.push_back(d.AsExprDoc(field));
  auto doc = std::make_shared<TupleDocNode>(std::move(fields));
  doc->source = node;
  return doc;
}

Doc BuildFuncType(const ObjectRef& node, IRDocsifier& d) {
  const auto* type = node.as<FuncTypeNode>();
  std::vector<ExprDoc> args;
  args.reserve(type->arg_types.size());
  for (const Type& arg : type->arg_types) args.push_back(d.AsExprDoc(arg));
  auto doc = std::make_shared<FunctionTypeDocNode>(std::move(args), d.AsExprDoc(type->ret_type));
  doc->source = node;
  return doc;
}

}  // namespace kiln::printer::graph
