// PrimFunc: a loop-dialect function. Parameters are storage variables, each
// bound to the buffer it is viewed as (the buffer map). It sits in an
// IRModule beside graph Functions (both are BaseFuncs).
#pragma once

#include <utility>
#include <vector>

#include "engine/ir/expr.h"
#include "engine/loop/stmt.h"

namespace kiln::loop {

class PrimFuncNode final : public BaseFuncNode {
 public:
  static constexpr bool IsKind(ObjectKind k) { return k == ObjectKind::kPrimFunc; }
  PrimFuncNode(std::vector<Var> params, std::vector<std::pair<Var, Buffer>> buffer_map,
               Stmt body, Attrs attrs, Span span)
      : BaseFuncNode(ObjectKind::kPrimFunc, std::move(attrs), ExprFields{std::move(span), nullptr, nullptr}),
        params(std::move(params)),
        buffer_map(std::move(buffer_map)),
        body(std::move(body)) {}

  // The buffer bound to param `i` (params[i] is its storage variable).
  const Buffer& param_buffer(size_t i) const { return buffer_map[i].second; }

  const std::vector<Var> params;
  const std::vector<std::pair<Var, Buffer>> buffer_map;  // one per param, in order
  const Stmt body;
};
using PrimFunc = Ref<PrimFuncNode>;

// Attribute key of the function's name as lowering chose it (a string).
inline constexpr char kAttrGlobalSymbol[] = "global_symbol";

// Parameters from buffers: each buffer's storage variable becomes a param.
PrimFunc MakePrimFunc(std::vector<Buffer> param_buffers, Stmt body, Attrs attrs = nullptr,
                      Span span = nullptr);
PrimFunc WithBody(const PrimFunc& func, Stmt body);

}  // namespace kiln::loop
