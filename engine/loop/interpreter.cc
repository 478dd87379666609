// The interpreter's entry points: argument checking, the module's kernel
// table (each kernel compiled once per run, on first call), and the shared
// execution state (step budget, cancellation, memory limit, first error).
#include "engine/loop/interpreter.h"

#include <algorithm>
#include <functional>
#include <map>
#include <memory>
#include <set>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "engine/loop/interpreter_program.h"
#include "engine/support/status_macros.h"

namespace kiln::loop {

namespace interp {

ExecState::ExecState(const InterpreterOptions& options) : options_(options) {
  next_check_ = options_.max_steps;
  if (PollsPeriodically()) {
    next_check_ = std::min(next_check_, std::max<int64_t>(1, options_.cancellation_check_interval));
  }
  // The first step checks the compile's budget: earlier runs may have spent it.
  if (options_.budget != nullptr) next_check_ = 0;
}

ExecState::~ExecState() {
  if (options_.budget != nullptr) {
    (void)options_.budget->ChargeSteps(steps_ - steps_charged_to_budget_);
  }
}

void ExecState::Fail(absl::Status status) {
  if (failed_) return;
  failed_ = true;
  if (function_ != nullptr) {
    status = absl::Status(status.code(), absl::StrCat("in function '", *function_, "': ",
                                                      std::string(status.message())));
  }
  error_ = std::move(status);
}

bool ExecState::CheckLimits() {
  if (failed_) return false;
  if (steps_ > options_.max_steps) {
    Fail(absl::ResourceExhaustedError(absl::StrCat(
        "the interpreter's step budget of ", options_.max_steps,
        " statements and expression evaluations is exhausted (raise "
        "InterpreterOptions::max_steps to run longer programs)")));
    return false;
  }
  if ((options_.is_cancelled && options_.is_cancelled()) ||
      (options_.budget != nullptr && options_.budget->cancelled())) {
    Fail(absl::CancelledError("the interpreter run was cancelled"));
    return false;
  }
  if (options_.budget != nullptr) {
    absl::Status charged = options_.budget->ChargeSteps(steps_ - steps_charged_to_budget_);
    steps_charged_to_budget_ = steps_;
    if (!charged.ok()) {
      Fail(std::move(charged));
      return false;
    }
  }
  next_check_ = options_.max_steps;
  if (PollsPeriodically()) {
    int64_t interval = std::max<int64_t>(1, options_.cancellation_check_interval);
    if (steps_ < next_check_ - interval) next_check_ = steps_ + interval;
  }
  return true;
}

bool ExecState::ReserveAllocation(int64_t bytes, const std::string& what) {
  if (bytes > options_.max_allocation_bytes - live_allocation_bytes_) {
    Fail(absl::ResourceExhaustedError(absl::StrCat(
        "allocation '", what, "' of ", bytes, " bytes exceeds the interpreter's memory limit of ",
        options_.max_allocation_bytes, " bytes (", live_allocation_bytes_,
        " bytes already allocated)")));
    return false;
  }
  if (options_.budget != nullptr) {
    absl::Status charged = options_.budget->Charge(bytes, absl::StrCat("allocation '", what, "'"));
    if (!charged.ok()) {
      Fail(std::move(charged));
      return false;
    }
  }
  live_allocation_bytes_ += bytes;
  return true;
}

}  // namespace interp

namespace {

using interp::CompiledFunc;

std::string ShapeString(const std::vector<int64_t>& shape) {
  return absl::StrCat("[", absl::StrJoin(shape, ", "), "]");
}

// One argument as the checks and the storages see it.
struct ArgRef {
  DataType dtype;
  const std::vector<int64_t>* shape;
  uint8_t* data;
  int64_t bytes;
};

absl::StatusOr<std::vector<ArgRef>> HostArgs(const PrimFuncNode& func, const std::string& name,
                                             const std::vector<HostTensor*>& args) {
  std::vector<ArgRef> refs;
  for (size_t i = 0; i < args.size(); ++i) {
    HostTensor* arg = args[i];
    if (arg == nullptr) {
      std::string param = i < func.params.size() ? func.param_buffer(i)->name : "?";
      return absl::InvalidArgumentError(absl::StrCat("argument ", i, " for parameter '", param,
                                                     "' of '", name, "' is null"));
    }
    refs.push_back(ArgRef{arg->dtype, &arg->shape, reinterpret_cast<uint8_t*>(arg->bytes.data()),
                          static_cast<int64_t>(arg->bytes.size())});
  }
  return refs;
}

absl::Status CheckArgs(const PrimFuncNode& func, const std::string& name,
                       const std::vector<ArgRef>& args) {
  if (args.size() != func.params.size()) {
    return absl::InvalidArgumentError(absl::StrCat("function '", name, "' takes ",
                                                   func.params.size(), " arguments, got ",
                                                   args.size()));
  }
  for (size_t i = 0; i < args.size(); ++i) {
    const Buffer& param = func.param_buffer(i);
    const ArgRef& arg = args[i];
    // The element count of a hostile shape may overflow: count carefully.
    int64_t num_bytes = DataTypeBytes(arg.dtype);
    int64_t num_elements = 1;
    bool valid_shape = true;
    for (int64_t d : *arg.shape) {
      valid_shape = valid_shape && d >= 0 && !__builtin_mul_overflow(num_bytes, d, &num_bytes);
      if (valid_shape) num_elements *= d;
    }
    if (!valid_shape || arg.bytes != num_bytes) {
      return absl::InvalidArgumentError(absl::StrCat(
          "argument ", i, " for parameter '", param->name, "' of '", name, "' holds ",
          arg.bytes, " bytes, which does not fit its type ", DataTypeName(arg.dtype),
          ShapeString(*arg.shape)));
    }
    // A symbolic parameter's size is a run's (its loads and stores are checked against the
    // argument's bytes like every other).
    if (arg.dtype != param->dtype ||
        (!param->is_symbolic() && num_elements != param->NumElements())) {
      return absl::InvalidArgumentError(absl::StrCat(
          "argument ", i, " for parameter '", param->name, "' of '", name, "' is ",
          DataTypeName(arg.dtype), ShapeString(*arg.shape), " (", num_elements,
          " elements), but the parameter is ", DataTypeName(param->dtype),
          ShapeString(param->shape), " (",
          param->is_symbolic() ? std::string("run-time") : absl::StrCat(param->NumElements()),
          " elements)"));
    }
  }
  return absl::OkStatus();
}

absl::Status Execute(const CompiledFunc& compiled, const std::vector<ArgRef>& args,
                     const InterpreterOptions& options) {
  KILN_RETURN_IF_ERROR(CheckArgs(*compiled.func, compiled.name, args));
  std::vector<interp::StorageView> storages;
  storages.reserve(args.size());
  for (const ArgRef& arg : args) storages.push_back(interp::StorageView{arg.data, arg.bytes});
  interp::ExecState state(options);
  interp::ExecuteCompiled(compiled, storages, &state);
  return state.error();
}

absl::Status Execute(const CompiledFunc& compiled, const std::vector<HostTensor*>& args,
                     const InterpreterOptions& options) {
  KILN_ASSIGN_OR_RETURN(std::vector<ArgRef> refs, HostArgs(*compiled.func, compiled.name, args));
  return Execute(compiled, refs, options);
}

// The module's PrimFuncs, compiled on first call. A kernel reached again
// while it is being compiled calls itself, which the interpreter rejects (it
// would never terminate, and compiled code has no stack for it either).
class ModuleKernels {
 public:
  explicit ModuleKernels(IRModule module)
      : module_(std::move(module)),
        resolver_([this](const CallKernelNode& call) { return Get(call.callee->name_hint); }) {}

  absl::StatusOr<const CompiledFunc*> Get(const std::string& name) {
    auto it = compiled_.find(name);
    if (it != compiled_.end()) return it->second.get();
    if (in_progress_.count(name) != 0) {
      return absl::InvalidArgumentError(
          absl::StrCat("kernel '", name, "' calls itself (directly or through other kernels)"));
    }
    BaseFunc func = module_->Lookup(name);
    if (!func.defined()) {
      return absl::NotFoundError(absl::StrCat("the module has no function '", name, "'"));
    }
    PrimFunc prim_func(func.as<PrimFuncNode>());
    if (!prim_func.defined()) {
      return absl::InvalidArgumentError(
          absl::StrCat("'", name, "' is a graph function, not a PrimFunc"));
    }
    in_progress_.insert(name);
    auto compiled = interp::CompilePrimFunc(prim_func, name, resolver_);
    in_progress_.erase(name);
    if (!compiled.ok()) return compiled.status();
    const CompiledFunc* result = compiled->get();
    compiled_.emplace(name, std::move(*compiled));
    return result;
  }

 private:
  IRModule module_;
  interp::KernelResolver resolver_;
  std::map<std::string, std::unique_ptr<CompiledFunc>> compiled_;
  std::set<std::string> in_progress_;
};

}  // namespace

absl::Status RunPrimFunc(const PrimFunc& func, const std::vector<HostTensor*>& args,
                         const InterpreterOptions& options) {
  KILN_ASSIGN_OR_RETURN(std::unique_ptr<CompiledFunc> compiled,
                        interp::CompilePrimFunc(func, "prim_func", nullptr));
  return Execute(*compiled, args, options);
}

absl::Status RunPrimFuncOnConstants(const PrimFunc& func, const std::vector<TensorData>& inputs,
                                    const std::vector<HostTensor*>& outputs,
                                    const InterpreterOptions& options) {
  KILN_ASSIGN_OR_RETURN(std::unique_ptr<CompiledFunc> compiled,
                        interp::CompilePrimFunc(func, "prim_func", nullptr));
  for (size_t i = 0; i < inputs.size() && i < compiled->stored_slots.size(); ++i) {
    if (compiled->stored_slots[i]) {
      return absl::InvalidArgumentError(
          absl::StrCat("function '", compiled->name, "' stores to parameter '",
                       func->param_buffer(i)->name, "', which is a read-only constant"));
    }
  }
  std::vector<ArgRef> refs;
  for (const TensorData& input : inputs) {
    // Read in place: the function stores to no input (checked above).
    refs.push_back(ArgRef{input->dtype, &input->shape,
                          reinterpret_cast<uint8_t*>(const_cast<char*>(input->bytes.data())),
                          static_cast<int64_t>(input->bytes.size())});
  }
  KILN_ASSIGN_OR_RETURN(std::vector<ArgRef> output_refs,
                        HostArgs(*func, compiled->name, outputs));
  refs.insert(refs.end(), output_refs.begin(), output_refs.end());
  return Execute(*compiled, refs, options);
}

absl::Status RunModuleFunction(const IRModule& module, std::string_view name,
                               const std::vector<HostTensor*>& args,
                               const InterpreterOptions& options) {
  ModuleKernels kernels(module);
  KILN_ASSIGN_OR_RETURN(const CompiledFunc* compiled, kernels.Get(std::string(name)));
  return Execute(*compiled, args, options);
}

}  // namespace kiln::loop
