// Running every schedule record step and comparing it with the vanilla one.
#include "engine/te/verify_schedule.h"

#include <cmath>
#include <string>

#include "absl/strings/str_cat.h"
#include "engine/loop/interpreter.h"
#include "engine/runtime/kiln_runtime.h"
#include "engine/support/status_macros.h"
#include "engine/te/lower_schedule.h"

namespace kiln::te {

namespace {

// splitmix64: a fixed generator, so the inputs of a seed are the same on
// every platform (std distributions are not).
uint64_t NextRandom(uint64_t* state) {
  uint64_t z = (*state += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

// Floats in [-1, 1); integers small enough that sums and products of a few
// thousand of them stay exact and in range; bools 0 or 1.
loop::HostTensor RandomTensor(DataType dtype, const std::vector<int64_t>& shape, uint64_t* state) {
  loop::HostTensor zeros = loop::HostTensor::Zeros(dtype, shape);
  std::vector<double> values(static_cast<size_t>(zeros.NumElements()));
  for (double& value : values) {
    uint64_t bits = NextRandom(state);
    if (IsFloat(dtype)) {
      value = static_cast<double>(bits >> 11) / static_cast<double>(uint64_t{1} << 53) * 2.0 - 1.0;
    } else if (dtype == DataType::kBool) {
      value = static_cast<double>(bits & 1);
    } else if (IsUnsignedInt(dtype)) {
      value = static_cast<double>(bits % 4);
    } else {
      value = static_cast<double>(static_cast<int64_t>(bits % 7) - 3);
    }
  }
  if (dtype == DataType::kString) {  // small numbers in text, what casts can read back
    std::vector<std::string> text;
    for (double value : values) text.push_back(std::to_string(static_cast<int64_t>(value)));
    return loop::HostTensor::FromStrings(shape, std::move(text));
  }
  return loop::HostTensor::FromDoubles(dtype, shape, values);
}

bool Close(DataType dtype, double actual, double expected) {
  if (std::isnan(expected) || std::isnan(actual)) return std::isnan(expected) && std::isnan(actual);
  if (actual == expected) return true;  // also equal infinities
  bool half = dtype == DataType::kFloat16 || dtype == DataType::kBFloat16;
  double tolerance = half ? 1e-2 : 1e-5;
  return std::fabs(actual - expected) <= tolerance * std::max(1.0, std::fabs(expected));
}

bool SameOutputs(const std::vector<loop::HostTensor>& actual,
                 const std::vector<loop::HostTensor>& expected) {
  for (size_t i = 0; i < expected.size(); ++i) {
    DataType dtype = expected[i].dtype;
    if (dtype == DataType::kString) {
      if (actual[i].Strings() != expected[i].Strings()) return false;
      continue;
    }
    if (!IsFloat(dtype)) {
      if (actual[i].bytes != expected[i].bytes) return false;
      continue;
    }
    std::vector<double> a = actual[i].ToDoubles();
    std::vector<double> e = expected[i].ToDoubles();
    for (size_t j = 0; j < e.size(); ++j) {
      if (!Close(dtype, a[j], e[j])) return false;
    }
  }
  return true;
}

class StepRunner {
 public:
  StepRunner(const std::vector<Tensor>& params, uint64_t seed,
             const loop::InterpreterOptions& interpreter, const StepExecutor& executor)
      : params_(params), interpreter_(interpreter), executor_(executor) {
    uint64_t state = seed;
    for (const Tensor& param : params) {
      bool is_input = param.op()->kind == OperationNode::Kind::kPlaceholder;
      inputs_.push_back(is_input ? RandomTensor(param.dtype(), param.shape(), &state)
                                 : loop::HostTensor::Zeros(param.dtype(), param.shape()));
      is_input_.push_back(is_input);
    }
  }

  // The outputs of the schedule `snapshot`, in param order.
  absl::StatusOr<std::vector<loop::HostTensor>> Run(const Schedule& snapshot, size_t step) {
    KILN_ASSIGN_OR_RETURN(loop::PrimFunc func,
                          LowerSchedule(snapshot, params_, absl::StrCat("step", step)));
    std::vector<loop::HostTensor> args = inputs_;
    std::vector<loop::HostTensor*> pointers;
    for (loop::HostTensor& arg : args) pointers.push_back(&arg);
    // Strings a step creates live in a run arena (engine/runtime/strings.c) until the outputs
    // hold copies of their own.
    void* enclosing = kiln_rt_strings_begin();
    absl::Status ran = executor_ ? executor_(func, pointers, is_input_)
                                 : loop::RunPrimFunc(func, pointers, interpreter_);
    std::vector<loop::HostTensor> outputs;
    for (size_t i = 0; i < args.size(); ++i) {
      if (is_input_[i]) continue;
      if (args[i].dtype == DataType::kString) {
        if (!ran.ok()) {
          args[i] = loop::HostTensor::Zeros(DataType::kString, args[i].shape);
        } else {
          if (kiln_rt_strings_keep(args[i].bytes.data(), args[i].NumElements()) != KILN_OK) {
            ran = absl::ResourceExhaustedError("copying a step's string outputs");
          }
          args[i].AdoptMallocedStrings();
        }
      }
      outputs.push_back(std::move(args[i]));
    }
    if (kiln_rt_strings_end(enclosing) != KILN_OK && ran.ok()) {
      ran = absl::ResourceExhaustedError("a step's strings did not fit in memory");
    }
    if (!ran.ok()) return ran;
    return outputs;
  }

 private:
  const std::vector<Tensor>& params_;
  const loop::InterpreterOptions& interpreter_;
  const StepExecutor& executor_;
  std::vector<loop::HostTensor> inputs_;  // outputs start as zeros
  std::vector<bool> is_input_;
};

}  // namespace

absl::StatusOr<std::vector<bool>> VerifyScheduleRecord(const Schedule& schedule,
                                                       const std::vector<Tensor>& params,
                                                       uint64_t seed,
                                                       const loop::InterpreterOptions& interpreter,
                                                       const StepExecutor& executor) {
  const std::vector<ScheduleStep>& record = schedule.record();
  if (record.empty()) {
    return absl::FailedPreconditionError(
        "the schedule keeps no record (ScheduleOptions::keep_record is false)");
  }
  for (const Tensor& param : params) {
    if (!param.defined()) return absl::InvalidArgumentError("undefined parameter tensor");
  }
  StepRunner runner(params, seed, interpreter, executor);
  absl::StatusOr<std::vector<loop::HostTensor>> vanilla = runner.Run(record[0].snapshot, 0);
  if (!vanilla.ok()) {
    return absl::Status(
        vanilla.status().code(),
        absl::StrCat("the vanilla schedule: ", std::string(vanilla.status().message())));
  }
  std::vector<bool> verified{true};
  for (size_t step = 1; step < record.size(); ++step) {
    absl::StatusOr<std::vector<loop::HostTensor>> outputs = runner.Run(record[step].snapshot, step);
    if (outputs.status().code() == absl::StatusCode::kCancelled) return outputs.status();
    verified.push_back(outputs.ok() && SameOutputs(*outputs, *vanilla));
  }
  return verified;
}

}  // namespace kiln::te
