// The loop dialect's one registration call, and how a statement or expression printed on its
// own gets the frame a function would give it.
#include "engine/loop/prim_func.h"
#include "engine/printer/loop/loop_builders.h"
#include "engine/printer/loop/loop_dialect.h"
#include "engine/printer/loop/loop_frames.h"

namespace kiln::printer {

namespace {

using BuildFn = Doc (*)(const ObjectRef&, IRDocsifier&);

// An expression outside any function: its names are local to this print, and its free
// variables and buffers are named without declarations.
IRDocsifier::Builder ExpressionBuilder(BuildFn build) {
  return [build](const ObjectRef& node, IRDocsifier& d) -> Doc {
    if (d.GetFrame<loop_printer::LoopFunctionFrame>() != nullptr) return build(node, d);
    auto token = d.WithDispatchToken(kLoopDispatchToken);
    auto frame =
        d.WithFrame(std::make_unique<loop_printer::LoopFunctionFrame>(/*declare_free=*/false));
    return build(node, d);
  };
}

// A statement outside any function: the free variables and buffers it uses are declared
// before it, as a function's body would declare them.
IRDocsifier::Builder StatementBuilder(BuildFn build) {
  return [build](const ObjectRef& node, IRDocsifier& d) -> Doc {
    if (d.GetFrame<loop_printer::LoopFunctionFrame>() != nullptr) return build(node, d);
    auto token = d.WithDispatchToken(kLoopDispatchToken);
    auto frame_guard =
        d.WithFrame(std::make_unique<loop_printer::LoopFunctionFrame>(/*declare_free=*/true));
    auto* frame = d.GetFrame<loop_printer::LoopFunctionFrame>();
    Doc doc = build(node, d);
    if (frame->top_declarations.empty()) return doc;
    std::vector<StmtDoc> stmts = std::move(frame->top_declarations);
    if (auto block = DocAs<StmtBlockDocNode>(doc)) {
      stmts.insert(stmts.end(), block->stmts.begin(), block->stmts.end());
    } else if (auto stmt = DocAs<StmtDocNode>(doc)) {
      stmts.push_back(std::move(stmt));
    }
    return std::make_shared<StmtBlockDocNode>(std::move(stmts));
  };
}

}  // namespace

bool IsLoopDialectNode(const Object* node) {
  if (node == nullptr) return false;
  const ObjectKind kind = node->kind();
  return kind == ObjectKind::kPrimFunc || kind == ObjectKind::kBuffer ||
         loop::PrimExprNode::IsKind(kind) || loop::StmtNode::IsKind(kind);
}

void RegisterLoopDialectPrinter(IRDocsifier::Registry& registry) {
  namespace lp = loop_printer;
  // Under the loop token, and in the default layer so that a PrimFunc in a module printed by
  // the graph dialect (and a loop node printed on its own) finds its builder.
  for (const char* token : {kLoopDispatchToken, ""}) {
    registry.Register(token, ObjectKind::kPrimFunc, lp::BuildPrimFunc);
    registry.Register(token, ObjectKind::kBuffer, StatementBuilder(lp::BuildBuffer));

    registry.Register(token, ObjectKind::kFor, StatementBuilder(lp::BuildFor));
    registry.Register(token, ObjectKind::kBufferStore, StatementBuilder(lp::BuildBufferStore));
    registry.Register(token, ObjectKind::kAllocate, StatementBuilder(lp::BuildAllocate));
    registry.Register(token, ObjectKind::kIfThenElse, StatementBuilder(lp::BuildIfThenElse));
    registry.Register(token, ObjectKind::kLetStmt, StatementBuilder(lp::BuildLetStmt));
    registry.Register(token, ObjectKind::kSeqStmt, StatementBuilder(lp::BuildSeqStmt));
    registry.Register(token, ObjectKind::kEvaluate, StatementBuilder(lp::BuildEvaluate));
    registry.Register(token, ObjectKind::kCallKernel, StatementBuilder(lp::BuildCallKernel));
    registry.Register(token, ObjectKind::kAssert, StatementBuilder(lp::BuildAssert));
    registry.Register(token, ObjectKind::kWhile, StatementBuilder(lp::BuildWhile));

    registry.Register(token, ObjectKind::kIntImm, ExpressionBuilder(lp::BuildIntImm));
    registry.Register(token, ObjectKind::kFloatImm, ExpressionBuilder(lp::BuildFloatImm));
    registry.Register(token, ObjectKind::kStringImm, ExpressionBuilder(lp::BuildStringImm));
    registry.Register(token, ObjectKind::kLoopVar, ExpressionBuilder(lp::BuildVar));
    registry.Register(token, ObjectKind::kBinary, ExpressionBuilder(lp::BuildBinary));
    registry.Register(token, ObjectKind::kNot, ExpressionBuilder(lp::BuildNot));
    registry.Register(token, ObjectKind::kCast, ExpressionBuilder(lp::BuildCast));
    registry.Register(token, ObjectKind::kSelect, ExpressionBuilder(lp::BuildSelect));
    registry.Register(token, ObjectKind::kIntrinsicCall, ExpressionBuilder(lp::BuildIntrinsicCall));
    registry.Register(token, ObjectKind::kBufferLoad, ExpressionBuilder(lp::BuildBufferLoad));
    registry.Register(token, ObjectKind::kRamp, ExpressionBuilder(lp::BuildRamp));
    registry.Register(token, ObjectKind::kBroadcast, ExpressionBuilder(lp::BuildBroadcast));
  }
}

}  // namespace kiln::printer
