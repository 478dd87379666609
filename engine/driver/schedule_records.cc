// Selecting kernels and expanding their schedule records.
#include "engine/driver/schedule_records.h"

#include "absl/strings/str_cat.h"
#include "engine/driver/native_step_executor.h"
#include "engine/lower/kernel_selector.h"
#include "engine/support/status_macros.h"

namespace kiln::driver {
namespace {

absl::Status CheckVerifiable(const lower::LoweredKernel& kernel, int64_t max_bytes) {
  int64_t bytes = 0;
  bool over = false;
  for (const te::Tensor& param : kernel.schedule_params) {
    int64_t size = DataTypeBytes(param.dtype());
    for (int64_t d : param.shape()) over |= __builtin_mul_overflow(size, d, &size);
    over |= __builtin_add_overflow(bytes, size, &bytes) || bytes > max_bytes;
  }
  if (!over) return absl::OkStatus();
  return absl::ResourceExhaustedError(absl::StrCat("verifying kernel ", kernel.name,
                                                   " needs more than ", max_bytes >> 20,
                                                   " MiB of parameters; ask without verify"));
}

}  // namespace

absl::StatusOr<std::vector<KernelScheduleRecord>> ScheduleRecords(
    const lower::LoweredModule& lowered, std::string_view selector,
    const ScheduleRecordOptions& options) {
  KILN_ASSIGN_OR_RETURN(std::vector<const lower::LoweredKernel*> kernels,
                        lower::SelectKernels(lowered, selector));
  if (options.first_only) kernels.resize(1);
  loop::InterpreterOptions interpreter;
  interpreter.is_cancelled = options.is_cancelled;
  std::vector<KernelScheduleRecord> records;
  for (const lower::LoweredKernel* kernel : kernels) {
    if (options.verify && options.max_verify_bytes) {
      KILN_RETURN_IF_ERROR(CheckVerifiable(*kernel, *options.max_verify_bytes));
    }
    KILN_ASSIGN_OR_RETURN(
        std::vector<lower::ScheduleRecordStep> steps,
        lower::ExpandScheduleRecord(
            *kernel, options.seed, options.verify, interpreter,
            options.verify_natively ? NativeStepExecutor(options.is_cancelled) : te::StepExecutor()));
    records.push_back({kernel, std::move(steps)});
  }
  return records;
}

std::string RenderScheduleRecord(const KernelScheduleRecord& record, bool json,
                                 const PrintOptions& print_options) {
  return json ? lower::RenderScheduleRecordJson(*record.kernel, record.steps, print_options)
              : lower::RenderScheduleRecordText(*record.kernel, record.steps, print_options);
}

}  // namespace kiln::driver
