// NativeStepExecutor: a one-kernel lowered module per step, compiled and run natively.
#include "engine/driver/native_step_executor.h"

#include "absl/strings/str_cat.h"
#include "engine/codegen/llvm/native_model.h"
#include "engine/driver/passes.h"
#include "engine/driver/run_model.h"
#include "engine/loop/stmt.h"
#include "engine/lower/lower_module.h"
#include "engine/pass/pass_context.h"
#include "engine/pass/pipeline.h"
#include "engine/support/status_macros.h"

namespace kiln::driver {
namespace {

// `step` as kernel "step" of a module whose main takes the inputs, then the outputs, and calls
// it with its params in their own order.
lower::LoweredModule StepModule(const loop::PrimFunc& step, const std::vector<bool>& is_input) {
  GlobalVar kernel = MakeGlobalVar("step");
  std::vector<loop::Buffer> inputs, outputs, call_args;
  for (size_t i = 0; i < step->params.size(); ++i) {
    const loop::Buffer& param = step->param_buffer(i);
    loop::Buffer own = loop::MakeBuffer(param->name, param->dtype, param->shape);
    (is_input[i] ? inputs : outputs).push_back(own);
    call_args.push_back(own);
  }
  std::vector<loop::Buffer> main_params = inputs;
  main_params.insert(main_params.end(), outputs.begin(), outputs.end());
  Attrs attrs = MakeAttrs({{loop::kAttrGlobalSymbol, AttrValue("main")},
                           {"workspace_bytes", AttrValue(int64_t{0})}});
  loop::PrimFunc main = loop::MakePrimFunc(
      main_params, loop::MakeCallKernel(kernel, call_args, step->span), attrs, step->span);
  lower::LoweredModule lowered;
  lowered.module = MakeModule({{kernel, step}, {MakeGlobalVar("main"), main}});
  lower::LoweredKernel info;
  info.name = info.function_name = "step";
  info.span = step->span;
  lowered.kernels.push_back(std::move(info));
  lowered.num_inputs = static_cast<int>(inputs.size());
  lowered.num_outputs = static_cast<int>(outputs.size());
  return lowered;
}

absl::Status RunStep(const loop::PrimFunc& step, const std::vector<loop::HostTensor*>& args,
                     const std::vector<bool>& is_input) {
  lower::LoweredModule lowered = StepModule(step, is_input);
  RegisteredPasses();
  KILN_ASSIGN_OR_RETURN(Pass pipeline, ParsePipeline(DefaultLoopPipeline()));
  {
    PassContext context;
    PassContext::Scope scope(context);
    KILN_RETURN_IF_ERROR(scope.status());
    KILN_ASSIGN_OR_RETURN(lowered.module, (*pipeline)(lowered.module, context));
    KILN_RETURN_IF_ERROR(scope.Close());
  }
  codegen::CodegenOptions options = HostCodegenOptions();
  options.debug_info = false;
  KILN_ASSIGN_OR_RETURN(codegen::NativeModule native, codegen::EmitNative(lowered, options));
  KILN_ASSIGN_OR_RETURN(std::unique_ptr<codegen::NativeModel> model,
                        codegen::NativeModel::Load(native));
  std::vector<loop::HostTensor*> inputs, outputs;
  for (size_t i = 0; i < args.size(); ++i) (is_input[i] ? inputs : outputs).push_back(args[i]);
  return model->Run(inputs, outputs);
}

}  // namespace

te::StepExecutor NativeStepExecutor(std::function<bool()> is_cancelled) {
  return [is_cancelled = std::move(is_cancelled)](const loop::PrimFunc& step,
                                                  const std::vector<loop::HostTensor*>& args,
                                                  const std::vector<bool>& is_input) {
    if (is_cancelled && is_cancelled()) {
      return absl::CancelledError("schedule-record verification was cancelled");
    }
    return RunStep(step, args, is_input);
  };
}

}  // namespace kiln::driver
