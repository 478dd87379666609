// The one list of builtin passes (RegisterBuiltinPasses, declared in
// engine/pass/pass_registry.h). Each pass's name, opt level and required
// passes are defined once, in its own factory; this table adds the summary
// that --list-passes shows. Add a pass here and nowhere else.
#include "engine/pass/pass_registry.h"
#include "engine/transform/dead_code_elimination.h"
#include "engine/transform/eliminate_common_subexpr.h"
#include "engine/transform/infer_type.h"
#include "engine/transform/inline.h"
#include "engine/transform/remove_unused_functions.h"
#include "engine/transform/simplify_expr.h"
#include "engine/transform/simplify_inference.h"
#include "engine/transform/to_a_normal_form.h"
#include "engine/transform/to_graph_normal_form.h"

namespace kiln {

void RegisterBuiltinPasses(PassRegistry& registry) {
  struct Builtin {
    Pass (*factory)();
    const char* summary;
  };
  // In pipeline order, roughly; --list-passes sorts by name.
  const Builtin builtins[] = {
      {transform::InferType, "infer checked types and normalize call attributes (incremental)"},
      {transform::ToGraphNormalForm, "replace let bindings by the values they bind"},
      {transform::ToANormalForm, "bind every intermediate value to a let variable"},
      {transform::Inline, "expand calls of functions marked Inline=1 and drop them"},
      {transform::RemoveUnusedFunctions, "drop functions main does not reach"},
      {transform::SimplifyInference,
       "unpack batch_norm, layer_norm and instance_norm into arithmetic"},
      {transform::SimplifyExpr,
       "collapse reshape, transpose and cast chains; remove identity ops"},
      {transform::EliminateCommonSubexpr, "compute each distinct value once, merging spans"},
      {transform::DeadCodeElimination, "remove let bindings whose variable is unused"},
  };
  for (const Builtin& builtin : builtins) {
    absl::Status status = registry.Register(builtin.factory()->info(), builtin.summary,
                                            builtin.factory);
    KILN_CHECK(status.ok()) << status.message();
  }
}

}  // namespace kiln
