// Kernel precision: which kernels of a finished compile lose precision in native code (fast-math
// reassociation, the approximate sigmoid, libmvec's transcendentals), each measured on its own.
//
// Measured along the whole model, a kernel's error would include every error upstream of it, so
// each kernel runs isolated instead: the optimized main is rebuilt so that every kernel call
// takes each computed argument as a parameter of its own, and those parameters receive the
// reference's exact values of the arguments. One native compile of that module runs every kernel
// on exact inputs; its results against the reference's are each kernel's own loss.
#include <algorithm>
#include <map>
#include <tuple>

#include "absl/strings/str_cat.h"
#include "engine/driver/numeric_drift.h"
#include "engine/driver/run_model.h"
#include "engine/ir/module.h"
#include "engine/ir/span.h"
#include "engine/lower/lowering_util.h"
#include "engine/support/status_macros.h"

namespace kiln::driver {
namespace {

// A kernel call of the optimized main and the computed values it reads.
struct KernelCall {
  Expr call;
  const lower::LoweredKernel* kernel = nullptr;
};

// Bytes of a tensor value of static shape (saturating at `limit` + 1), or -1 for anything else.
int64_t TensorBytes(const Expr& expr, int64_t limit) {
  const auto* type = expr->checked_type.as<TensorTypeNode>();
  if (type == nullptr) return -1;
  int64_t elements = 1;
  for (const Dim& dim : type->shape) {
    if (!dim.is_static()) return -1;
    elements = dim.value > 0 && elements > limit / dim.value ? limit + 1 : elements * dim.value;
  }
  return std::min(elements, limit + 1) * DataTypeBytes(type->dtype);
}

// An argument read as it is (a parameter of main or a constant); anything else is computed by
// another call and becomes a parameter of the isolated module.
bool ReadAsIs(const Expr& arg) {
  return arg->kind() == ObjectKind::kVar || arg->kind() == ObjectKind::kConstant;
}

}  // namespace

absl::StatusOr<KernelPrecisionReport> DriftChecker::CheckKernels(const CompileResult& compiled,
                                                                 bool fast_math) const {
  if (!compiled.lowered.has_value() || !compiled.optimized) {
    return absl::FailedPreconditionError("the compile was not lowered");
  }
  const bool native_reference = options_.codegen.has_value();
  if (native_reference && !fast_math) {
    return absl::FailedPreconditionError(
        "the check runs native code (a model too large for the interpreter, or the native "
        "backend asked for), and without fast-math native code is its own reference: kernels "
        "are compared only with fast_math");
  }
  const auto* main = compiled.optimized->Lookup("main").as<FunctionNode>();
  if (main == nullptr) return absl::FailedPreconditionError("the optimized module has no main");

  // The calls of main in the order lowering numbered them (LoweredKernel::call_indices).
  std::map<int, const lower::LoweredKernel*> kernel_of_call;
  for (const lower::LoweredKernel& kernel : compiled.lowered->kernels) {
    for (int index : kernel.call_indices) kernel_of_call[index] = &kernel;
  }
  std::vector<KernelCall> calls;
  int call_count = 0;
  bool binds_let = false;
  KILN_RETURN_IF_ERROR(lower::VisitDataflowPostOrder(
      main->body,
      [&](const Expr& expr) {
        if (expr->kind() == ObjectKind::kIf) {
          // Lowering numbers a branch's calls where it meets the If: not this walk's order.
          return absl::UnimplementedError(
              "main branches (an If with a run-time condition): its kernels cannot be isolated");
        }
        if (expr->kind() != ObjectKind::kCall) return absl::OkStatus();
        for (const Expr& arg : expr.as<CallNode>()->args) {
          if (arg->kind() == ObjectKind::kFunction) {
            // A while_loop: its body's kernels run once per iteration, on state no call holds.
            return absl::UnimplementedError(
                "main loops (a Loop known only at run time): its kernels cannot be isolated");
          }
        }
        auto it = kernel_of_call.find(call_count++);
        if (it != kernel_of_call.end()) calls.push_back({expr, it->second});
        return absl::OkStatus();
      },
      [&](const LetNode&) { binds_let = true; }));
  if (binds_let) {
    return absl::UnimplementedError("main binds values with let: its kernels cannot be isolated");
  }

  // Every kernel whose result and arguments are tensors, while their bytes fit the budget: the
  // reference returns each computed argument once and each result.
  KernelPrecisionReport report;
  report.reference = native_reference ? "native without fast-math" : "interp";
  std::vector<Expr> arguments;  // computed arguments, each once
  std::map<const ExprNode*, size_t> argument_index;
  std::vector<const KernelCall*> compared;
  const int64_t budget = kMaxCheckedBytes / 2;
  int64_t bytes = 0;
  for (const KernelCall& kernel_call : calls) {
    const auto& call = *kernel_call.call.as<CallNode>();
    int64_t needed = TensorBytes(kernel_call.call, budget);
    std::vector<Expr> fresh;
    for (const Expr& arg : call.args) {
      if (ReadAsIs(arg) || argument_index.count(arg.get()) != 0) continue;
      int64_t arg_bytes = TensorBytes(arg, budget);
      if (arg_bytes < 0) needed = -1;
      if (needed < 0) break;
      if (std::find_if(fresh.begin(), fresh.end(),
                       [&](const Expr& e) { return e.same_as(arg); }) == fresh.end()) {
        needed += arg_bytes;
        fresh.push_back(arg);
      }
    }
    if (needed < 0 || bytes + needed > budget) {
      ++report.kernels_not_compared;
      continue;
    }
    bytes += needed;
    for (const Expr& arg : fresh) {
      argument_index[arg.get()] = arguments.size();
      arguments.push_back(arg);
    }
    compared.push_back(&kernel_call);
  }
  if (compared.empty()) return report;

  // The reference: the optimized module returning every computed argument and every result.
  std::vector<Expr> extra = arguments;
  for (const KernelCall* kernel_call : compared) extra.push_back(kernel_call->call);
  KILN_ASSIGN_OR_RETURN(CompileResult reference_compiled,
                        Lower(WithExtraOutputs(compiled.optimized, extra)));
  KILN_ASSIGN_OR_RETURN(std::vector<loop::HostTensor> reference,
                        Run(reference_compiled, native_reference, inputs_));
  const size_t first_argument = reference.size() - extra.size();

  // The isolated module: main's parameters, then one per computed argument; each kernel call
  // reads those, and main returns every result.
  std::vector<Var> params = main->params;
  std::vector<loop::HostTensor> isolated_inputs = inputs_;
  for (size_t i = 0; i < arguments.size(); ++i) {
    params.push_back(MakeVar(absl::StrCat("kernel_argument_", i), arguments[i]->checked_type));
    isolated_inputs.push_back(std::move(reference[first_argument + i]));
  }
  std::vector<Expr> results;
  for (const KernelCall* kernel_call : compared) {
    const auto& call = *kernel_call->call.as<CallNode>();
    std::vector<Expr> args;
    for (const Expr& arg : call.args) {
      auto it = argument_index.find(arg.get());
      args.push_back(it == argument_index.end() ? arg : Expr(params[main->params.size() + it->second]));
    }
    results.push_back(MakeCall(call.op, std::move(args), call.attrs, kernel_call->call->span));
  }
  Function isolated_main =
      MakeFunction(params, MakeTuple(results, main->body->span), nullptr, main->attrs, main->span);
  IRModule isolated =
      WithFunction(compiled.optimized, compiled.optimized->GetGlobalVar("main"), isolated_main);

  CompileOptions code = options_;
  code.codegen = HostCodegenOptions();
  code.codegen->fast_math = fast_math;
  KILN_ASSIGN_OR_RETURN(CompileResult isolated_compiled, LowerWith(isolated, code));
  KILN_ASSIGN_OR_RETURN(std::vector<loop::HostTensor> got,
                        Run(isolated_compiled, /*native=*/true, isolated_inputs));
  if (got.size() != compared.size()) {
    return absl::InternalError("the isolated kernels returned a different number of values");
  }
  const size_t first_result = reference.size() - compared.size();
  for (size_t i = 0; i < compared.size(); ++i) {
    KernelDrift drift;
    drift.kernel = compared[i]->kernel->name;
    // The call's own layers: a kernel shared by several layers names them all.
    drift.layers = SpanSourceNames(compared[i]->call->span);
    std::tie(drift.max_abs_error, drift.max_rel_error) =
        ErrorsBetween(got[i], reference[first_result + i]);
    report.kernels.push_back(std::move(drift));
  }
  return report;
}

}  // namespace kiln::driver
