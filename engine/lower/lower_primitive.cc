// Primitive function -> tensor expressions -> default schedule -> PrimFunc.
#include "engine/lower/lower_primitive.h"

#include "absl/strings/str_cat.h"
#include "engine/lower/default_schedule.h"
#include "engine/lower/lowering_util.h"
#include "engine/lower/primitive_compute.h"
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

absl::StatusOr<LoweredPrimitive> LowerPrimitive(const FunctionNode& func, const std::string& name,
                                                const DefaultScheduleOptions& schedule_options) {
  KILN_ASSIGN_OR_RETURN(PrimitiveCompute compute, BuildPrimitiveCompute(func));
  LoweredPrimitive lowered;
  lowered.schedule = CreateDefaultSchedule(compute.outputs, schedule_options);
  lowered.params = compute.inputs;
  lowered.params.insert(lowered.params.end(), compute.outputs.begin(), compute.outputs.end());
  lowered.params.insert(lowered.params.end(), compute.constant_inputs.begin(),
                        compute.constant_inputs.end());
  lowered.constants = std::move(compute.constants);
  absl::StatusOr<loop::PrimFunc> func_or = te::LowerSchedule(lowered.schedule, lowered.params, name);
  if (!func_or.ok()) {
    return Prefixed(NodePrefix(absl::StrCat("kernel ", name), func.span), func_or.status());
  }
  lowered.func = *std::move(func_or);
  return lowered;
}

}  // namespace kiln::lower
