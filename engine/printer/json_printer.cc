// Graph IR as JSON (docs/ir-json.md). Node ids are post-order indices within each top-level
// function (parameters first), so they are stable for a given module and every input id is
// smaller than the id of the node using it. A loop PrimFunc carries its script text.
#include "engine/printer/json_printer.h"

#include <functional>

#include <cmath>
#include <cstring>
#include <functional>
#include <string>
#include <unordered_map>
#include <vector>

#include "engine/ir/dtype_dispatch.h"
#include "engine/ir/expr_visitor.h"
#include "engine/ir/virtual_device.h"
#include "engine/loop/prim_func.h"
#include "engine/printer/loop/loop_dialect.h"
#include "engine/printer/printer.h"
#include "nlohmann/json.hpp"

namespace kiln {

namespace {

using Json = nlohmann::ordered_json;

Json FloatJson(double value) {
  if (std::isfinite(value)) return value;
  if (std::isnan(value)) return "nan";
  return value > 0 ? "inf" : "-inf";
}

Json DimJson(const Dim& dim) {
  if (dim.is_static()) return dim.value;
  return dim.symbol.empty() ? "?" : dim.symbol;
}

Json AttrValueJson(const AttrValue& value) {
  if (value.is<int64_t>()) return value.get<int64_t>();
  if (value.is<double>()) return FloatJson(value.get<double>());
  if (value.is<bool>()) return value.get<bool>();
  if (value.is<std::string>()) return value.get<std::string>();
  if (value.is<DataType>())
    return Json{{"dtype", std::string(DataTypeName(value.get<DataType>()))}};
  if (value.is<ShapeValue>()) {
    Json dims = Json::array();
    for (const Dim& dim : value.get<ShapeValue>().dims) dims.push_back(DimJson(dim));
    return Json{{"shape", std::move(dims)}};
  }
  Json array = Json::array();
  for (const AttrValue& element : value.get<AttrValue::Array>()) {
    array.push_back(AttrValueJson(element));
  }
  return array;
}

Json AttrsJson(const Attrs& attrs) {
  Json object = Json::object();
  if (!attrs) return object;
  for (const auto& [key, value] : attrs->fields) object[key] = AttrValueJson(value);
  return object;
}

Json SpansJson(const Span& span) {
  Json names = Json::array();
  for (std::string& name : SpanSourceNames(span)) names.push_back(std::move(name));
  return names;
}

Json VirtualDeviceJson(const VirtualDevice& device) {
  Json object = Json::object();
  if (!device->device_type.empty()) object["device_type"] = device->device_type;
  if (device->device_id >= 0) object["device_id"] = device->device_id;
  if (!device->target.empty()) object["target"] = device->target;
  if (!device->memory_scope.empty()) object["memory_scope"] = device->memory_scope;
  return object;
}

Json ScalarJson(const TensorDataNode& data) {
  auto load = [&data](auto value) {
    std::memcpy(&value, data.bytes.data(), sizeof(value));
    return value;
  };
  return DispatchDataType(data.dtype, [&]<DataType D>() -> Json {
    if constexpr (D == DataType::kFloat16 || D == DataType::kBFloat16) {
      return nullptr;  // no exact JSON number
    } else if constexpr (IsFloat(D)) {
      return FloatJson(load(DataTypeStorage<D>{}));
    } else if constexpr (D == DataType::kBool) {
      return load(DataTypeStorage<D>{}) != 0;
    } else {
      return load(DataTypeStorage<D>{});
    }
  });
}

// The node table's order: post-order from the parameters, each distinct
// node once, without the function itself and without Op nodes. Ids are
// positions in this order (docs/ir-json.md).
void ForEachNumberedNode(const FunctionNode* function, const std::function<void(const Expr&)>& fn) {
  PostOrderVisit(Function(function), [&](const Expr& expr) {
    if (expr.get() == function || expr->kind() == ObjectKind::kOp) return;
    fn(expr);
  });
}

class FunctionJsonBuilder {
 public:
  Json Build(const std::string& name, const FunctionNode* function) {
    ForEachNumberedNode(function, [this](const Expr& expr) {
      ids_.emplace(expr.get(), static_cast<int64_t>(order_.size()));
      order_.push_back(expr);
    });
    Json json = Json::object();
    json["name"] = name;
    json["kind"] = "Function";
    AddFunctionFields(function, &json);
    json["spans"] = SpansJson(function->span);
    Json nodes = Json::array();
    for (const Expr& expr : order_) nodes.push_back(NodeJson(expr));
    json["nodes"] = std::move(nodes);
    return json;
  }

 private:
  Json IdOf(const Expr& expr) const {
    if (!expr) return nullptr;
    auto it = ids_.find(expr.get());
    return it == ids_.end() ? Json(nullptr) : Json(it->second);
  }

  Json IdsOf(const std::vector<Expr>& exprs) const {
    Json ids = Json::array();
    for (const Expr& expr : exprs) ids.push_back(IdOf(expr));
    return ids;
  }

  std::string TypeText(const Type& type) {
    auto it = type_text_.find(type.get());
    if (it != type_text_.end()) return it->second;
    std::string text = PrintType(type);
    type_text_.emplace(type.get(), text);
    return text;
  }

  void AddFunctionFields(const FunctionNode* function, Json* json) {
    Json params = Json::array();
    for (const Var& param : function->params) params.push_back(IdOf(param));
    (*json)["params"] = std::move(params);
    (*json)["body"] = IdOf(function->body);
    if (function->ret_type) (*json)["ret_type"] = TypeText(function->ret_type);
    (*json)["attrs"] = AttrsJson(function->attrs);
    if (!IsFullyUnconstrained(function->virtual_device)) {
      (*json)["virtual_device"] = VirtualDeviceJson(function->virtual_device);
    }
  }

  Json NodeJson(const Expr& expr) {
    Json json = Json::object();
    json["id"] = ids_.at(expr.get());
    json["kind"] = ObjectKindName(expr->kind());
    switch (expr->kind()) {
      case ObjectKind::kVar:
        json["name"] = expr.as<VarNode>()->name_hint;
        break;
      case ObjectKind::kGlobalVar:
        json["name"] = expr.as<GlobalVarNode>()->name_hint;
        break;
      case ObjectKind::kConstant: {
        const TensorData& data = expr.as<ConstantNode>()->data;
        if (!data) break;
        json["dtype"] = std::string(DataTypeName(data->dtype));
        json["shape"] = data->shape;
        if (data->shape.empty() &&
            data->bytes.size() == static_cast<size_t>(DataTypeBytes(data->dtype))) {
          json["value"] = ScalarJson(*data);
        }
        break;
      }
      case ObjectKind::kCall: {
        const auto* call = expr.as<CallNode>();
        if (const auto* op = call->op.as<OpNode>()) {
          json["op"] = op->name;
        } else {
          json["callee"] = IdOf(call->op);
        }
        json["inputs"] = IdsOf(call->args);
        json["attrs"] = AttrsJson(call->attrs);
        break;
      }
      case ObjectKind::kTuple:
        json["inputs"] = IdsOf(expr.as<TupleNode>()->elements);
        break;
      case ObjectKind::kTupleGetItem: {
        const auto* item = expr.as<TupleGetItemNode>();
        json["inputs"] = Json::array({IdOf(item->tuple)});
        json["index"] = item->index;
        break;
      }
      case ObjectKind::kLet: {
        const auto* let = expr.as<LetNode>();
        json["var"] = IdOf(let->var);
        json["value"] = IdOf(let->value);
        json["body"] = IdOf(let->body);
        break;
      }
      case ObjectKind::kIf: {
        const auto* node = expr.as<IfNode>();
        json["cond"] = IdOf(node->cond);
        json["then"] = IdOf(node->true_branch);
        json["else"] = IdOf(node->false_branch);
        break;
      }
      case ObjectKind::kFunction:
        AddFunctionFields(expr.as<FunctionNode>(), &json);
        break;
      default:
        break;
    }
    Type type = expr->checked_type;
    if (!type) {
      if (const auto* var = expr.as<VarNode>()) type = var->type_annotation;
    }
    if (type) json["type"] = TypeText(type);
    json["spans"] = SpansJson(expr->span);
    if (!IsFullyUnconstrained(expr->virtual_device) && expr->kind() != ObjectKind::kFunction) {
      json["virtual_device"] = VirtualDeviceJson(expr->virtual_device);
    }
    return json;
  }

  std::vector<Expr> order_;
  std::unordered_map<const ExprNode*, int64_t> ids_;
  std::unordered_map<const TypeNode*, std::string> type_text_;
};

}  // namespace

std::string PrintModuleJson(const IRModule& module, int indent) {
  Json json = Json::object();
  json["format"] = "kiln.graph-ir";
  json["version"] = 1;
  json["attrs"] = AttrsJson(module->attrs);
  Json functions = Json::array();
  for (const auto& [global, function] : module->functions) {
    if (const auto* graph_function = function.as<FunctionNode>()) {
      functions.push_back(FunctionJsonBuilder().Build(global->name_hint, graph_function));
    } else if (function->kind() == ObjectKind::kPrimFunc) {
      // Loop IR has no node table here: its script text carries it whole.
      functions.push_back(Json{
          {"name", global->name_hint},
          {"kind", ObjectKindName(function->kind())},
          {"spans", SpansJson(function->span)},
          {"script", printer::PrintPrimFuncScript(global->name_hint,
                                                  Downcast<loop::PrimFuncNode>(function),
                                                  /*show_spans=*/true)}});
    } else {
      functions.push_back(
          Json{{"name", global->name_hint}, {"kind", ObjectKindName(function->kind())}});
    }
  }
  json["functions"] = std::move(functions);
  std::string text = json.dump(indent, ' ', /*ensure_ascii=*/true, Json::error_handler_t::replace);
  text.push_back('\n');
  return text;
}

std::vector<NodeSources> ModuleSpanTable(const IRModule& module) {
  std::vector<NodeSources> table;
  for (const auto& entry : module->functions) {
    // Not a structured binding: clang 14 cannot capture one in the lambda.
    const GlobalVar& global = entry.first;
    const auto* graph_function = entry.second.as<FunctionNode>();
    if (graph_function == nullptr) continue;
    int64_t id = 0;
    ForEachNumberedNode(graph_function, [&](const Expr& expr) {
      std::vector<std::string> sources = SpanSourceNames(expr->span);
      if (!sources.empty()) table.push_back({global->name_hint, id, std::move(sources)});
      ++id;
    });
  }
  return table;
}

}  // namespace kiln
