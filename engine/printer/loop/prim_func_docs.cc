// PrimFuncs: `@T.prim_func def name(A: T.Buffer(...), ...):` with the function's attributes as
// `T.func_attr({...})`, then the declarations of buffers and variables the body uses without
// defining, then the body. A PrimFunc printed at the top of a module takes the module's name
// for it; printed alone, its `global_symbol` attribute or `main`.
#include <string>
#include <vector>

#include "engine/ir/attrs.h"
#include "engine/printer/builtin_dialects.h"
#include "engine/printer/loop/loop_builders.h"
#include "engine/printer/loop/loop_dialect.h"
#include "engine/printer/loop/loop_frames.h"
#include "engine/printer/module_frame.h"
#include "engine/printer/script_renderer.h"

namespace kiln::printer {

namespace loop_printer {

namespace {

ExprDoc AttrValueDoc(const AttrValue& value) {
  if (value.is<int64_t>()) return IntLiteral(value.get<int64_t>());
  if (value.is<double>()) return FloatLiteral(value.get<double>());
  if (value.is<bool>()) return BoolLiteral(value.get<bool>());
  if (value.is<std::string>()) return StringLiteral(value.get<std::string>());
  if (value.is<DataType>()) return StringLiteral(DataTypeName(value.get<DataType>()));
  if (value.is<ShapeValue>()) {
    std::vector<ExprDoc> dims;
    for (const Dim& dim : value.get<ShapeValue>().dims) {
      dims.push_back(dim.is_static()
                         ? ExprDoc(IntLiteral(dim.value))
                         : ExprDoc(StringLiteral(dim.symbol.empty() ? "?" : dim.symbol)));
    }
    return std::make_shared<TupleDocNode>(std::move(dims));
  }
  std::vector<ExprDoc> elements;
  for (const AttrValue& element : value.get<AttrValue::Array>()) {
    elements.push_back(AttrValueDoc(element));
  }
  return std::make_shared<ListDocNode>(std::move(elements));
}

// `T.func_attr({"key": value, ...})`, or null without attributes.
StmtDoc FuncAttrDoc(const Attrs& attrs) {
  if (!attrs || attrs->fields.empty()) return nullptr;
  std::vector<ExprDoc> keys;
  std::vector<ExprDoc> values;
  for (const auto& [key, value] : attrs->fields) {
    keys.push_back(StringLiteral(key));
    values.push_back(AttrValueDoc(value));
  }
  return std::make_shared<ExprStmtDocNode>(
      TCall("func_attr", {std::make_shared<DictDocNode>(std::move(keys), std::move(values))}));
}

}  // namespace

Doc BuildPrimFunc(const ObjectRef& node, IRDocsifier& d) {
  const auto* func = node.as<loop::PrimFuncNode>();
  IdDoc name;
  if (auto* module = d.GetFrame<ModuleFrame>();
      module != nullptr && module->pending_definition == node.get()) {
    name = module->pending_name;
    module->pending_definition = nullptr;
  } else {
    // On its own: the name lowering gave it, else `main`.
    std::string symbol = "main";
    if (func->attrs) {
      for (const auto& [key, value] : func->attrs->fields) {
        if (key == loop::kAttrGlobalSymbol && value.is<std::string>()) {
          symbol = LoopName(value.get<std::string>());
        }
      }
    }
    name = Id(std::move(symbol), IdKind::kGlobal);
  }

  auto token = d.WithDispatchToken(kLoopDispatchToken);
  auto frame_guard = d.WithFrame(std::make_unique<LoopFunctionFrame>(/*declare_free=*/true));
  LoopFunctionFrame* frame = d.GetFrame<LoopFunctionFrame>();

  // A parameter is its buffer; the storage variable the caller passes is `A.data`.
  std::vector<AssignDoc> args;
  args.reserve(func->buffer_map.size());
  for (size_t i = 0; i < func->buffer_map.size(); ++i) {
    const auto& [param, buffer] = func->buffer_map[i];
    IdDoc id = d.DefByName(buffer, LoopName(buffer->name), IdKind::kLocal);
    auto storage = std::make_shared<AttrAccessDocNode>(id, "data");
    d.DefByDoc(param, storage);
    if (!d.IsDefined(buffer->data.get())) d.DefByDoc(buffer->data, storage);
    auto arg =
        std::make_shared<AssignDocNode>(id, nullptr, BufferCallDoc(d, buffer.get(), param.get()));
    arg->source = buffer;
    args.push_back(std::move(arg));
  }

  std::vector<StmtDoc> body_stmts = StmtList(d, func->body);
  std::vector<StmtDoc> body;
  if (StmtDoc attrs = FuncAttrDoc(func->attrs)) body.push_back(std::move(attrs));
  body.insert(body.end(), frame->top_declarations.begin(), frame->top_declarations.end());
  body.insert(body.end(), body_stmts.begin(), body_stmts.end());

  auto doc = std::make_shared<FunctionDocNode>(std::move(name), std::move(args),
                                               std::vector<ExprDoc>{TAttr("prim_func")}, nullptr,
                                               std::move(body));
  doc->source = node;
  doc->comment = LoopSpanComment(d, func->span);
  return doc;
}

Doc BuildBuffer(const ObjectRef& node, IRDocsifier& d) {
  // Only a buffer printed on its own is dispatched (inside a function, BufferDoc names
  // buffers): it prints as its declaration, which the fragment wrapper places.
  ExprDoc id = BufferDoc(d, Downcast<loop::BufferNode>(node));
  auto* frame = d.GetFrame<LoopFunctionFrame>();
  if (frame != nullptr && !frame->top_declarations.empty()) {
    auto block = std::make_shared<StmtBlockDocNode>(std::move(frame->top_declarations));
    frame->top_declarations.clear();
    return block;
  }
  return id;
}

}  // namespace loop_printer

std::string PrintPrimFuncScript(const std::string& name, const loop::PrimFunc& func,
                                bool show_spans) {
  DocsifierOptions options;
  options.show_spans = show_spans;
  IRDocsifier docsifier(BuiltinDocRegistry(), options);
  auto token = docsifier.WithDispatchToken(kLoopDispatchToken);
  auto frame = docsifier.WithFrame(std::make_unique<ModuleFrame>());
  ModuleFrame* module = docsifier.GetFrame<ModuleFrame>();
  module->pending_definition = func.get();
  module->pending_name = Id(loop_printer::LoopName(name), IdKind::kGlobal);
  return RenderScript(docsifier.AsDoc(func));
}

}  // namespace kiln::printer
