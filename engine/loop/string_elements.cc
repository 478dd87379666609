// A visitor that stops looking at the first string element.
#include "engine/loop/string_elements.h"

#include "engine/loop/functor.h"

namespace kiln::loop {
namespace {

class StringFinder final : public StmtExprVisitor {
 public:
  bool found = false;

  void VisitExpr(const PrimExpr& expr) override {
    if (found) return;
    if (expr->type.dtype == DataType::kString) {
      found = true;
      return;
    }
    StmtExprVisitor::VisitExpr(expr);
  }
  void VisitStmt(const Stmt& stmt) override {
    if (!found) StmtExprVisitor::VisitStmt(stmt);
  }
  void VisitBufferStore_(const BufferStoreNode* op) override {
    if (op->buffer->dtype == DataType::kString) found = true;
    StmtExprVisitor::VisitBufferStore_(op);
  }
};

}  // namespace

bool TouchesStrings(const PrimFuncNode& func) {
  for (size_t i = 0; i < func.params.size(); ++i) {
    if (func.param_buffer(i)->dtype == DataType::kString) return true;
  }
  StringFinder finder;
  finder.VisitStmt(func.body);
  return finder.found;
}

bool ModuleTouchesStrings(const IRModule& module) {
  if (!module) return false;
  for (const auto& [name, func] : module->functions) {
    const auto* prim = func.as<PrimFuncNode>();
    if (prim != nullptr && TouchesStrings(*prim)) return true;
  }
  return false;
}

}  // namespace kiln::loop
