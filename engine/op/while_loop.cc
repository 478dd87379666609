// while_loop: a loop that runs on a condition known only when the model runs, as XLA's While
// and JAX's lax.while_loop are (ONNX Loop imports to it, control_flow.cc in the importer):
//   while_loop(body, init_0, ..., init_{n-1}, invariant_0, ..., invariant_{m-1})
// state = init; while (state[0]) state = body(state..., invariants...); the result is the
// final state, a tuple. `body` is a closed function: every value it reads from outside is one
// of its invariant parameters, so passes see no free variables and lowering computes what does
// not depend on the state once, before the loop. State 0 is the condition (a bool scalar);
// every state keeps its type from one iteration to the next.
#include "absl/strings/str_cat.h"
#include "engine/ir/structural_equal.h"
#include "engine/op/op_families.h"
#include "engine/op/type_relations.h"

namespace kiln {
namespace {

absl::StatusOr<Type> WhileLoopRelation(const TypeRelationInput& in) {
  const auto* body = in.args[0].as<FuncTypeNode>();
  if (body == nullptr) {
    return absl::InvalidArgumentError(
        absl::StrCat("argument 0 must be the body function, got ", TypeToString(in.args[0])));
  }
  const auto* state = body->ret_type.as<TupleTypeNode>();
  if (state == nullptr || state->fields.empty()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "the body must return the next state, a tuple, got ", TypeToString(body->ret_type)));
  }
  const size_t num_state = state->fields.size();
  if (body->arg_types.size() < num_state) {
    return absl::InvalidArgumentError(absl::StrCat("the body takes ", body->arg_types.size(),
                                                   " parameters for ", num_state, " states"));
  }
  if (in.args.size() != 1 + body->arg_types.size()) {
    return absl::InvalidArgumentError(absl::StrCat("the body takes ", body->arg_types.size(),
                                                   " parameters but the loop passes ",
                                                   in.args.size() - 1));
  }
  const auto* cond = state->fields[0].as<TensorTypeNode>();
  if (cond == nullptr || cond->dtype != DataType::kBool || !cond->shape.empty()) {
    return absl::InvalidArgumentError(absl::StrCat("state 0 (the condition) must be a bool scalar, got ",
                                                   TypeToString(state->fields[0])));
  }
  for (size_t k = 0; k < body->arg_types.size(); ++k) {
    if (!StructuralEqual(body->arg_types[k], in.args[1 + k])) {
      return absl::InvalidArgumentError(absl::StrCat(
          k < num_state ? "the initial value of state " : "invariant ",
          k < num_state ? k : k - num_state, " is ", TypeToString(in.args[1 + k]),
          " but the body takes ", TypeToString(body->arg_types[k])));
    }
    if (k < num_state && !StructuralEqual(body->arg_types[k], state->fields[k])) {
      return absl::InvalidArgumentError(absl::StrCat(
          "state ", k, " is ", TypeToString(body->arg_types[k]), " on entry but the body gives ",
          TypeToString(state->fields[k]), ": a loop-carried value keeps its type"));
    }
    if (in.args[1 + k].as<TensorTypeNode>() == nullptr) {
      return absl::InvalidArgumentError(absl::StrCat(
          "argument ", 1 + k, " must be a tensor, got ", TypeToString(in.args[1 + k])));
    }
  }
  return body->ret_type;
}

}  // namespace

void RegisterControlFlowOps(OpRegistry& registry) {
  OpEntry entry;
  entry.name = "while_loop";
  entry.summary = "the state after running body on it while its condition (state 0) holds";
  entry.pattern = OpPattern::kOpaque;
  entry.min_args = 2;
  entry.max_args = -1;
  entry.relation = WhileLoopRelation;
  // Not one kernel: lowering runs the body's kernels in a loop of main (lower_module.cc).
  entry.compute = [](const ComputeInput&) -> absl::StatusOr<std::vector<te::Tensor>> {
    return absl::UnimplementedError(
        "while_loop is control flow: lowering makes it a loop of main, not a kernel");
  };
  registry.Register(std::move(entry));
}

}  // namespace kiln
