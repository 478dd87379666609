// The public printing API: one docsifier per call (thread safety), then one renderer.
#include "engine/printer/printer.h"

#include "absl/strings/str_cat.h"
#include "engine/printer/builtin_dialects.h"
#include "engine/printer/graph/graph_dialect.h"
#include "engine/printer/ir_docsifier.h"
#include "engine/printer/loop/loop_dialect.h"
#include "engine/printer/relay_renderer.h"
#include "engine/printer/script_renderer.h"

namespace kiln {

namespace printer {

Doc BuildDoc(const ObjectRef& node, const PrintOptions& options) {
  DocsifierOptions docsifier_options;
  docsifier_options.show_spans = options.show_spans;
  docsifier_options.show_metadata = options.show_metadata;
  IRDocsifier docsifier(BuiltinDocRegistry(), docsifier_options);
  auto token = docsifier.WithDispatchToken(IsLoopDialectNode(node.get()) ? kLoopDispatchToken
                                                                          : kGraphDispatchToken);
  return docsifier.AsDoc(node);
}

}  // namespace printer

namespace {

std::string Render(const ObjectRef& node, const std::vector<ObjectRef>& highlights,
                   const PrintOptions& options) {
  printer::Doc doc = printer::BuildDoc(node, options);
  printer::RenderOptions render_options;
  for (const ObjectRef& highlight : highlights) {
    if (highlight) render_options.highlight_sources.insert(highlight.get());
  }
  // The loop dialect has no Relay form: its nodes on their own always print as script.
  if (printer::IsLoopDialectNode(node.get())) return printer::RenderScript(doc, render_options);
  switch (options.format) {
    case PrintOptions::Format::kScript:
      return printer::RenderScript(doc, render_options);
    case PrintOptions::Format::kRelay:
      break;
  }
  return printer::RenderRelay(doc, render_options);
}

}  // namespace

std::string PrintModule(const IRModule& module, const PrintOptions& options) {
  return Render(module, {}, options);
}

std::string PrintModuleWithSourceLines(const IRModule& module, const PrintOptions& options,
                                       std::unordered_map<const Object*, int>* lines) {
  printer::Doc doc = printer::BuildDoc(module, options);
  printer::RenderOptions render_options;
  render_options.source_lines = lines;
  return options.format == PrintOptions::Format::kScript
             ? printer::RenderScript(doc, render_options)
             : printer::RenderRelay(doc, render_options);
}

std::string PrintExpr(const Expr& expr, const PrintOptions& options) {
  return Render(expr, {}, options);
}

std::string PrintType(const Type& type, const PrintOptions& options) {
  return Render(type, {}, options);
}

std::string PrintNode(const ObjectRef& node, const PrintOptions& options) {
  return Render(node, {}, options);
}

std::string PrintModuleWithUnderlines(const IRModule& module, const std::vector<ObjectRef>& nodes,
                                      const PrintOptions& options) {
  return Render(module, nodes, options);
}

std::string PrintExprWithUnderlines(const Expr& expr, const std::vector<ObjectRef>& nodes,
                                    const PrintOptions& options) {
  return Render(expr, nodes, options);
}

std::string PrintNodeWithUnderlines(const ObjectRef& node, const std::vector<ObjectRef>& nodes,
                                    const PrintOptions& options) {
  return Render(node, nodes, options);
}

std::string RenderStructuralMismatch(const ObjectRef& lhs, const ObjectRef& rhs,
                                     const StructuralMismatch& mismatch,
                                     const PrintOptions& options) {
  auto with_newline = [](std::string text) {
    if (text.empty() || text.back() != '\n') text.push_back('\n');
    return text;
  };
  return absl::StrCat("StructuralEqual check failed, first mismatch at ", mismatch.path, ": ",
                      mismatch.reason, "\n", with_newline(Render(lhs, {mismatch.lhs}, options)),
                      "\n", with_newline(Render(rhs, {mismatch.rhs}, options)));
}

}  // namespace kiln
