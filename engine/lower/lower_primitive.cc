// Primitive function -> tensor expressions -> default schedule -> PrimFunc.
#include "engine/lower/lower_primitive.h"

#include "absl/strings/str_cat.h"
#include "engine/loop/functor.h"
#include "engine/lower/default_schedule.h"
#include "engine/lower/lowering_util.h"
#include "engine/lower/primitive_compute.h"
#include "engine/lower/symbolic_schedule.h"
#include "engine/support/status_macros.h"
#include "engine/te/lower_schedule.h"

namespace kiln::lower {

std::string PrimitiveName(const FunctionNode& func, int index) {
  const AttrValue* name = func.attrs ? func.attrs->Find("name") : nullptr;
  if (name != nullptr && name->is<std::string>() && !name->get<std::string>().empty()) {
    return name->get<std::string>();
  }
  return absl::StrCat("fused_", index);
}

loop::PrimFunc BindSymbols(const loop::PrimFunc& func, const te::SymbolVars& symbols,
                           const loop::Buffer& values) {
  loop::Stmt body = func->body;
  for (size_t i = symbols.size(); i-- > 0;) {
    loop::PrimExpr value = loop::MakeBufferLoad(values, {loop::IntImm(static_cast<int64_t>(i))});
    body = loop::MakeLetStmt(symbols[i].second, value, body, func->span);
  }
  return loop::WithBody(func, body);
}

namespace {

// A kernel's storage of run-time size would be allocated on every call, and native code has no
// way to report a failed allocation from inside a kernel.
absl::Status CheckStaticAllocations(const loop::Stmt& body) {
  absl::Status status;
  loop::PreOrderVisit(body, [&](const Object* node) {
    const auto* op = node->kind() == ObjectKind::kAllocate
                         ? static_cast<const loop::AllocateNode*>(node)
                         : nullptr;
    if (status.ok() && op != nullptr && op->is_dynamic()) {
      status = absl::UnimplementedError(absl::StrCat(
          "its intermediate ", op->data->name,
          " has a size known only at run time; such kernels are not supported yet"));
    }
  });
  return status;
}

bool AnySymbolic(const std::vector<te::Tensor>& tensors) {
  for (const te::Tensor& t : tensors) {
    if (t.is_symbolic()) return true;
  }
  return false;
}

}  // namespace

absl::StatusOr<LoweredPrimitive> LowerPrimitive(const FunctionNode& func, const std::string& name,
                                                const DefaultScheduleOptions& schedule_options,
                                                const te::SymbolVars* symbols) {
  te::SymbolScope symbol_scope(symbols);
  KILN_ASSIGN_OR_RETURN(PrimitiveCompute compute, BuildPrimitiveCompute(func));
  std::vector<te::SymbolEquality> equalities = symbol_scope.equalities();
  const bool symbolic = AnySymbolic(compute.inputs) || AnySymbolic(compute.outputs);
  LoweredPrimitive lowered;
  lowered.schedule = symbolic ? CreateSymbolicSchedule(compute.outputs, schedule_options.vector_lanes)
                              : CreateDefaultSchedule(compute.outputs, schedule_options);
  lowered.params = compute.inputs;
  lowered.params.insert(lowered.params.end(), compute.outputs.begin(), compute.outputs.end());
  lowered.params.insert(lowered.params.end(), compute.constant_inputs.begin(),
                        compute.constant_inputs.end());
  te::Tensor symbol_values;
  if (symbolic) {
    symbol_values = te::Placeholder(kSymbolsParam, DataType::kInt64,
                                    std::vector<int64_t>{static_cast<int64_t>(symbols->size())});
    lowered.params.push_back(symbol_values);
  }
  lowered.constants = std::move(compute.constants);
  lowered.equalities = std::move(equalities);
  std::string prefix = NodePrefix(absl::StrCat("kernel ", name), func.span);
  absl::StatusOr<loop::PrimFunc> func_or = te::LowerSchedule(lowered.schedule, lowered.params, name);
  if (!func_or.ok()) return Prefixed(prefix, func_or.status());
  lowered.func = *std::move(func_or);
  if (symbolic) {
    if (absl::Status status = CheckStaticAllocations(lowered.func->body); !status.ok()) {
      return Prefixed(prefix, status);
    }
    lowered.func = BindSymbols(lowered.func, *symbols, symbol_values.op()->buffer);
    lowered.takes_symbols = true;
  }
  return lowered;
}

}  // namespace kiln::lower
