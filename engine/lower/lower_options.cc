// Lowering options from PassContext config.
#include "engine/lower/lower_options.h"

#include <algorithm>

#include "engine/pass/pass_config.h"
#include "engine/pass/pass_context.h"

namespace kiln::lower {

LowerOptions LowerOptionsFromContext(const PassContext& context) {
  LowerOptions options;
  options.keep_schedule_record = context.GetConfig<bool>(kConfigKeepScheduleRecord);
  options.share_kernels = context.GetConfig<bool>(kConfigShareKernels);
  options.min_parallel_work = std::max<int64_t>(0, context.GetConfig<int64_t>(kConfigMinParallelWork));
  return options;
}

}  // namespace kiln::lower
