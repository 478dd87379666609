// Rewriting buffer loads in loop expressions and statements: the one
// mechanism behind cache_read (readers load the cache instead), compute_inline
// (a load becomes the producer's body) and region buffers of compute_at (a
// load is shifted into the smaller buffer).
#pragma once

#include <functional>
#include <vector>

#include "engine/loop/stmt.h"

namespace kiln::te {

// Called for each load, innermost first, with the load's indices already
// rewritten. Returns the replacement, or null to keep the load (rebuilt with
// the rewritten indices when they changed).
using LoadRewrite = std::function<loop::PrimExpr(const loop::BufferLoadNode* load,
                                                 const std::vector<loop::PrimExpr>& indices)>;

loop::PrimExpr RewriteLoads(const loop::PrimExpr& expr, const LoadRewrite& rewrite);
loop::Stmt RewriteLoads(const loop::Stmt& stmt, const LoadRewrite& rewrite);

// Every load of `buffer` in `expr`, in evaluation (pre-)order.
std::vector<const loop::BufferLoadNode*> CollectLoads(const loop::PrimExpr& expr,
                                                      const loop::Buffer& buffer);

// The buffers `expr` loads from, without repeats, in order of first load.
std::vector<loop::Buffer> LoadedBuffers(const loop::PrimExpr& expr);

}  // namespace kiln::te
