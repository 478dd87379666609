// Lowering options from PassContext config.
#include "engine/lower/lower_options.h"

#include "engine/pass/pass_config.h"
#include "engine/pass/pass_context.h"

namespace kiln::lower {

LowerOptions LowerOptionsFromContext(const PassContext& context) {
  LowerOptions options;
  options.keep_schedule_record = context.GetConfig<bool>(kConfigKeepScheduleRecord);
  options.share_kernels = context.GetConfig<bool>(kConfigShareKernels);
  return options;
}

}  // namespace kiln::lower
