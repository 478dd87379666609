// IRModule: the unit of compilation. An ordered map from GlobalVar to function
// (insertion order is print order), module attributes, and the table of
// source names its spans refer to. Immutable like every node: passes build a
// new module that shares unchanged functions.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "engine/ir/attrs.h"
#include "engine/ir/expr.h"

namespace kiln {

class IRModuleNode final : public Object {
 public:
  static constexpr bool IsKind(ObjectKind k) { return k == ObjectKind::kIRModule; }
  using Entry = std::pair<GlobalVar, BaseFunc>;

  IRModuleNode(std::vector<Entry> functions, Attrs attrs)
      : Object(ObjectKind::kIRModule), functions(std::move(functions)), attrs(std::move(attrs)) {}

  // Lookup by name; null when absent.
  BaseFunc Lookup(std::string_view name) const;
  GlobalVar GetGlobalVar(std::string_view name) const;

  // Every source name the module's spans mention, each once, in order of first
  // appearance walking functions in order. Of a loop PrimFunc, only its own span
  // counts (its statements are not walked here).
  std::vector<std::string> SourceNames() const;

  const std::vector<Entry> functions;
  const Attrs attrs;
};
using IRModule = Ref<IRModuleNode>;

IRModule MakeModule(std::vector<IRModuleNode::Entry> functions, Attrs attrs = nullptr);
// A module whose only function is `main`.
IRModule MakeModuleFromMain(BaseFunc main);
// A copy with `name` bound to `func` (replaced in place, or appended).
IRModule WithFunction(const IRModule& module, const GlobalVar& name, BaseFunc func);

}  // namespace kiln
