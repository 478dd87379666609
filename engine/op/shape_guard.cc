// Run-time checks of shapes compiled in from a model's declarations. When an operand that decides
// a shape (a Reshape's shape, TopK's k, NonZero's count of nonzeros) is known only at run time
// but the model declares the shape it decides, Kiln compiles that shape and checks the operand
// when the model runs, as Relax's match_cast does:
//   shape_operand_check(operand) -> bool: every element of a small integer operand is one of the
//     values that give the compiled shape (Reshape's shape element i may be d_i, 0 or -1, ...);
//   assert(data, condition) -> data: the run fails with `message` unless condition holds.
// `assert` is stateful, so no pass folds, merges or drops it; lowering makes its result a view
// of `data` and the check a statement of main, before the kernels that read the result.
#include "absl/strings/str_cat.h"
#include "engine/op/op_families.h"
#include "engine/op/transform_ops.h"
#include "engine/op/type_relations.h"
#include "engine/support/request_limits.h"
#include "engine/support/status_macros.h"

namespace kiln {
namespace {

absl::StatusOr<Type> ShapeOperandCheckRelation(const TypeRelationInput& in) {
  KILN_ASSIGN_OR_RETURN(const TensorTypeNode* operand, TensorArg(in, 0));
  KILN_RETURN_IF_ERROR(ExpectIntegerDType(operand, "operand"));
  if (operand->shape.size() > 1 || (operand->shape.size() == 1 && !operand->shape[0].is_static())) {
    return absl::InvalidArgumentError("the operand must be a scalar or a 1-D tensor of static length");
  }
  int64_t elements = operand->shape.empty() ? 1 : operand->shape[0].value;
  // Shapes and axes never have more entries than a tensor has dims; the check's expression
  // grows with the square of the count (pairwise distinct axes).
  if (elements > kMaxTensorRank) {
    return absl::InvalidArgumentError(absl::StrCat("the operand has ", elements,
                                                   " elements, more than the limit of ",
                                                   kMaxTensorRank));
  }
  std::vector<int64_t> counts = IntArrayAttr(in.attrs, "allowed_counts");
  std::vector<int64_t> allowed = IntArrayAttr(in.attrs, "allowed");
  if (static_cast<int64_t>(counts.size()) != elements) {
    return absl::InvalidArgumentError(absl::StrCat("allowed_counts has ", counts.size(),
                                                   " entries for an operand of ", elements,
                                                   " elements"));
  }
  int64_t total = 0;
  for (int64_t count : counts) {
    // An axis is allowed as itself and as itself minus the rank.
    if (count < 0 || count > 2 * kMaxTensorRank) {
      return absl::InvalidArgumentError(absl::StrCat("allowed_counts must be in [0, ",
                                                     2 * kMaxTensorRank, "], got ", count));
    }
    total += count;
  }
  if (total != static_cast<int64_t>(allowed.size())) {
    return absl::InvalidArgumentError(absl::StrCat("allowed_counts sum to ", total, " but allowed has ",
                                                   allowed.size(), " values"));
  }
  if (IntArrayAttr(in.attrs, "at_most_once").size() > static_cast<size_t>(kMaxTensorRank)) {
    return absl::InvalidArgumentError(
        absl::StrCat("at_most_once lists more than ", kMaxTensorRank, " values"));
  }
  if (IntAttr(in.attrs, "distinct_modulo") < 0) {
    return absl::InvalidArgumentError("distinct_modulo must not be negative");
  }
  return Type(MakeTensorType({}, DataType::kBool));
}

absl::StatusOr<Type> AssertRelation(const TypeRelationInput& in) {
  KILN_ASSIGN_OR_RETURN(const TensorTypeNode* data, TensorArg(in, 0));
  KILN_ASSIGN_OR_RETURN(const TensorTypeNode* condition, TensorArg(in, 1));
  if (condition->dtype != DataType::kBool || !condition->shape.empty()) {
    return absl::InvalidArgumentError("the condition must be a bool scalar");
  }
  return Type(MakeTensorType(data->shape, data->dtype));
}

}  // namespace

void RegisterShapeGuardOps(OpRegistry& registry) {
  {
    OpEntry entry;
    entry.name = "shape_operand_check";
    entry.summary = "whether every element of a shape-deciding operand is one of its allowed values";
    entry.pattern = OpPattern::kOpaque;
    entry.attrs = {
        {"allowed", AttrKind::kIntArray, IntArray({}),
         "the allowed values of every element, element after element", nullptr},
        {"allowed_counts", AttrKind::kIntArray, IntArray({}),
         "how many allowed values each element has (0: any value)", nullptr},
        {"distinct_modulo", AttrKind::kInt, AttrValue(0),
         "when positive, the elements (a negative one plus this) must be pairwise distinct "
         "(axes of this rank)",
         nullptr},
        {"at_most_once", AttrKind::kIntArray, IntArray({}),
         "values that may appear at most once (a Reshape's -1)", nullptr}};
    entry.relation = ShapeOperandCheckRelation;
    registry.Register(std::move(entry));
  }
  {
    OpEntry entry;
    entry.name = "assert";
    entry.summary = "data, if condition holds when the model runs; else the run fails";
    entry.pattern = OpPattern::kOpaque;
    entry.min_args = entry.max_args = 2;
    entry.stateful = true;
    entry.attrs = {{"message", AttrKind::kString, AttrValue(std::string()),
                    "the run's error when the condition does not hold", nullptr}};
    entry.relation = AssertRelation;
    registry.Register(std::move(entry));
  }
}

}  // namespace kiln
