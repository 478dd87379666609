// A module: `#[attrs(...)]` when it has attributes, its functions in order, then the metadata
// table when asked for. Global names are given out before any function prints, so calls to
// functions defined further down already have their names.
#include <vector>

#include "engine/ir/module.h"
#include "engine/printer/graph/graph_builders.h"
#include "engine/printer/graph/graph_frames.h"

namespace kiln::printer::graph {

Doc BuildModule(const ObjectRef& node, IRDocsifier& d) {
  const auto* module = node.as<IRModuleNode>();
  auto frame_guard = d.WithFrame(std::make_unique<GraphModuleFrame>());
  GraphModuleFrame* frame = d.GetFrame<GraphModuleFrame>();

  std::vector<IdDoc> names;
  names.reserve(module->functions.size());
  for (const auto& [global, function] : module->functions) {
    names.push_back(d.DefByName(global, SanitizeName(global->name_hint), IdKind::kGlobal));
  }

  std::vector<StmtDoc> functions;
  functions.reserve(module->functions.size());
  for (size_t i = 0; i < module->functions.size(); ++i) {
    const BaseFunc& function = module->functions[i].second;
    frame->pending_definition = function.get();
    frame->pending_name = names[i];
    Doc doc = d.AsDoc(function);
    frame->pending_definition = nullptr;
    if (auto stmt = DocAs<StmtDocNode>(doc)) {
      functions.push_back(std::move(stmt));
    } else {
      // A function kind without a top-level form: show it as an expression statement.
      functions.push_back(std::make_shared<ExprStmtDocNode>(DocAs<ExprDocNode>(doc)));
    }
  }

  std::vector<ExprDoc> decorators;
  if (module->attrs && !module->attrs->fields.empty()) {
    auto attrs = std::make_shared<CallDocNode>(Id("attrs"), std::vector<ExprDoc>{});
    AppendAttrKwargs(module->attrs, attrs.get());
    decorators.push_back(std::move(attrs));
  }
  auto doc =
      std::make_shared<ClassDocNode>(Id("Module"), std::move(decorators), std::move(functions));
  doc->source = node;
  std::vector<AssignDoc> metadata =
      d.options().show_metadata ? MetadataEntries(d) : std::vector<AssignDoc>{};
  if (metadata.empty()) return doc;
  return std::make_shared<StmtBlockDocNode>(
      std::vector<StmtDoc>{std::move(doc), std::make_shared<MetadataDocNode>(std::move(metadata))});
}

}  // namespace kiln::printer::graph
