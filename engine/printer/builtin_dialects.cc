// Registration of the built-in dialect printers.
#include "engine/printer/builtin_dialects.h"

#include <mutex>

#include "engine/printer/graph/graph_dialect.h"
#include "engine/printer/loop/loop_dialect.h"

namespace kiln::printer {

void RegisterBuiltinDialects(IRDocsifier::Registry& registry) {
  RegisterGraphDialectPrinter(registry);
  RegisterLoopDialectPrinter(registry);
}

const IRDocsifier::Registry& BuiltinDocRegistry() {
  static std::once_flag once;
  static IRDocsifier::Registry* registry = nullptr;
  std::call_once(once, [] {
    registry = new IRDocsifier::Registry();  // never freed: printers may run until exit
    RegisterBuiltinDialects(*registry);
  });
  return *registry;
}

}  // namespace kiln::printer
