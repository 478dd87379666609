// The graph dialect's one registration call.
#include "engine/printer/graph/graph_builders.h"
#include "engine/printer/graph/graph_dialect.h"

namespace kiln::printer {

namespace {

// An expression asked for outside any function prints as a fragment; inside one, as itself.
IRDocsifier::Builder ExpressionBuilder(Doc (*build)(const ObjectRef&, IRDocsifier&)) {
  return [build](const ObjectRef& node, IRDocsifier& d) -> Doc {
    if (graph::NeedsFragment(d, node)) return graph::BuildFragment(d, Downcast<ExprNode>(node));
    return build(node, d);
  };
}

// A span printed on its own reads as it does inside `/* si=... */`.
Doc BuildSpan(const ObjectRef& node, IRDocsifier&) {
  auto doc = Id(graph::SpanText(Downcast<SpanNode>(node)));
  doc->source = node;
  return doc;
}

}  // namespace

void RegisterGraphDialectPrinter(IRDocsifier::Registry& registry) {
  // Under the graph token, and in the default layer so that a node of the graph dialect met
  // while another dialect's token is on top still prints.
  for (const char* token : {kGraphDispatchToken, ""}) {
    registry.Register(token, ObjectKind::kIRModule, graph::BuildModule);
    registry.Register(token, ObjectKind::kFunction, ExpressionBuilder(graph::BuildFunction));
    registry.Register(token, ObjectKind::kVar, ExpressionBuilder(graph::BuildVar));
    registry.Register(token, ObjectKind::kGlobalVar, ExpressionBuilder(graph::BuildGlobalVar));
    registry.Register(token, ObjectKind::kConstant, ExpressionBuilder(graph::BuildConstant));
    registry.Register(token, ObjectKind::kOp, ExpressionBuilder(graph::BuildOp));
    registry.Register(token, ObjectKind::kCall, ExpressionBuilder(graph::BuildCall));
    registry.Register(token, ObjectKind::kTuple, ExpressionBuilder(graph::BuildTuple));
    registry.Register(token, ObjectKind::kTupleGetItem,
                      ExpressionBuilder(graph::BuildTupleGetItem));
    registry.Register(token, ObjectKind::kLet, ExpressionBuilder(graph::BuildLet));
    registry.Register(token, ObjectKind::kIf, ExpressionBuilder(graph::BuildIf));
    registry.Register(token, ObjectKind::kTensorType, graph::BuildTensorType);
    registry.Register(token, ObjectKind::kTupleType, graph::BuildTupleType);
    registry.Register(token, ObjectKind::kFuncType, graph::BuildFuncType);
    registry.Register(token, ObjectKind::kVirtualDevice, graph::BuildVirtualDevice);
    registry.Register(token, ObjectKind::kSpan, BuildSpan);
    registry.Register(token, ObjectKind::kSequentialSpan, BuildSpan);
  }
}

}  // namespace kiln::printer
