// ToGraphNormalForm: replaces let bindings by the values they bind, giving
// the dataflow graph form that pattern-matching passes (SimplifyExpr,
// FuseOps) see through: in A-normal form a let variable hides its value.
#pragma once

#include "engine/pass/pass.h"

namespace kiln::transform {

// Every `let %x = v; body` becomes `body` with `%x` replaced by `v`; a value
// used several times becomes one shared node. The value keeps its span; the
// let's own span and its variable's are dropped with the binding (they
// describe the binding, not the computation). Opt level 0: passes and the
// lowering that expect graph form need it in every pipeline.
Pass ToGraphNormalForm();

}  // namespace kiln::transform
