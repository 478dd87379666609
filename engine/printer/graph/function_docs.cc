// Functions: `def @name(...)` at the top of a module, `fn (...)` anywhere else. Parameters
// come first, then attributes as `key=value`, then the result's virtual device.
#include <optional>
#include <vector>

#include "engine/ir/virtual_device.h"
#include "engine/printer/graph/graph_builders.h"
#include "engine/printer/graph/graph_frames.h"

namespace kiln::printer::graph {

namespace {

std::vector<AssignDoc> FunctionArgs(IRDocsifier& d, const FunctionNode* function) {
  std::vector<AssignDoc> args;
  args.reserve(function->params.size());
  for (const Var& param : function->params) args.push_back(VarBinding(d, param));
  for (AssignDoc& attr : AttrArgs(function->attrs)) args.push_back(std::move(attr));
  if (!IsFullyUnconstrained(function->virtual_device)) {
    args.push_back(std::make_shared<AssignDocNode>(Id("virtual_device"),
                                                   d.AsExprDoc(function->virtual_device), nullptr));
  }
  return args;
}

bool IsPendingDefinition(const IRDocsifier& d, const ObjectRef& node) {
  const GraphModuleFrame* module = d.GetFrame<GraphModuleFrame>();
  return module != nullptr && module->pending_definition == node.get();
}

}  // namespace

Doc BuildFunction(const ObjectRef& node, IRDocsifier& d) {
  const auto* function = node.as<FunctionNode>();
  const Function handle = Downcast<FunctionNode>(node);
  ExprDoc return_type = function->ret_type ? d.AsExprDoc(function->ret_type) : nullptr;

  if (IsPendingDefinition(d, node)) {
    GraphModuleFrame* module = d.GetFrame<GraphModuleFrame>();
    IdDoc name = module->pending_name;
    module->pending_definition = nullptr;
    // A top-level function is its own name scope: names and temporaries restart.
    auto frame = d.WithFrame(std::make_unique<GraphFunctionFrame>(handle));
    std::vector<AssignDoc> args = FunctionArgs(d, function);
    std::vector<StmtDoc> body = EmitScope(d, function->body, false);
    auto doc =
        std::make_shared<FunctionDocNode>(std::move(name), std::move(args), std::vector<ExprDoc>{},
                                          std::move(return_type), std::move(body));
    doc->source = node;
    doc->comment = SpanComment(d, function->span);
    return doc;
  }

  std::vector<AssignDoc> args = FunctionArgs(d, function);
  std::vector<StmtDoc> body = EmitScope(d, function->body, false);
  auto doc = std::make_shared<FunctionExprDocNode>(std::move(args), std::move(return_type),
                                                   std::move(body));
  doc->source = node;
  doc->comment = SpanComment(d, function->span);
  return doc;
}

bool NeedsFragment(const IRDocsifier& d, const ObjectRef& node) {
  return d.GetFrame<GraphFunctionFrame>() == nullptr && !IsPendingDefinition(d, node);
}

Doc BuildFragment(IRDocsifier& d, const Expr& expr) {
  std::optional<IRDocsifier::ScopeGuard> module_frame;
  if (d.GetFrame<GraphModuleFrame>() == nullptr) {
    module_frame.emplace(d.WithFrame(std::make_unique<GraphModuleFrame>()));
  }
  auto function_frame = d.WithFrame(std::make_unique<GraphFunctionFrame>(expr));
  auto body = std::make_shared<StmtBlockDocNode>(EmitScope(d, expr, false));
  std::vector<AssignDoc> metadata =
      d.options().show_metadata ? MetadataEntries(d) : std::vector<AssignDoc>{};
  if (metadata.empty()) return body;
  return std::make_shared<StmtBlockDocNode>(std::vector<StmtDoc>{
      std::move(body), std::make_shared<MetadataDocNode>(std::move(metadata))});
}

}  // namespace kiln::printer::graph
