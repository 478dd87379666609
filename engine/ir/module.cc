// IRModule lookup and construction.
#include "engine/ir/module.h"

#include <unordered_set>

#include "engine/ir/expr_visitor.h"

namespace kiln {

BaseFunc IRModuleNode::Lookup(std::string_view name) const {
  for (const auto& [gv, func] : functions) {
    if (gv->name_hint == name) return func;
  }
  return nullptr;
}

GlobalVar IRModuleNode::GetGlobalVar(std::string_view name) const {
  for (const auto& [gv, func] : functions) {
    if (gv->name_hint == name) return gv;
  }
  return nullptr;
}

namespace {

class SourceNameCollector : public ExprVisitor {
 public:
  std::vector<std::string> names;

  void Add(const Span& span) {
    for (std::string& name : SpanSourceNames(span)) {
      if (seen_.insert(name).second) names.push_back(std::move(name));
    }
  }

 protected:
  void VisitExpr_(const Expr& expr) override {
    Add(expr->span);
    ExprVisitor::VisitExpr_(expr);
  }

 private:
  std::unordered_set<std::string> seen_;
};

}  // namespace

std::vector<std::string> IRModuleNode::SourceNames() const {
  SourceNameCollector collector;
  for (const auto& [gv, func] : functions) {
    // Loop IR is not walked from here (ir sits below loop): a PrimFunc adds its own span.
    if (func->kind() != ObjectKind::kFunction) {
      collector.Add(func->span);
      continue;
    }
    collector.VisitExpr(func);
  }
  return std::move(collector.names);
}

IRModule MakeModule(std::vector<IRModuleNode::Entry> functions, Attrs attrs) {
  return MakeRef<IRModuleNode>(std::move(functions), std::move(attrs));
}

IRModule MakeModuleFromMain(BaseFunc main) {
  return MakeModule({{MakeGlobalVar("main"), std::move(main)}});
}

IRModule WithFunction(const IRModule& module, const GlobalVar& name, BaseFunc func) {
  std::vector<IRModuleNode::Entry> functions = module->functions;
  for (auto& entry : functions) {
    if (entry.first->name_hint == name->name_hint) {
      entry = {name, std::move(func)};
      return MakeModule(std::move(functions), module->attrs);
    }
  }
  functions.emplace_back(name, std::move(func));
  return MakeModule(std::move(functions), module->attrs);
}

}  // namespace kiln
