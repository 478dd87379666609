// write_row(rows, value, row): `rows` with its row `row` (axis 0, an int64 scalar known at run
// time) replaced by `value`, as XLA's DynamicUpdateSlice of one row; a row outside
// [0, rows) leaves `rows` as it is. A while_loop's scan outputs and recurrent layers' Y are
// accumulators written a row per iteration with it (while_loop_builder.cc).
//
// As a kernel it computes every element (a select per row). In a loop whose next state k is
// write_row(state k, ...) and whose body reads state k nowhere else, lowering instead writes the
// one row into the state in place (lower_module.cc): O(row) per iteration, not O(rows x row).
// It is opaque so that FuseOps keeps it a call of its own, which lowering can recognize.
#include "absl/strings/str_cat.h"
#include "engine/ir/structural_equal.h"
#include "engine/op/compute/compute_util.h"
#include "engine/op/op_families.h"
#include "engine/op/type_relations.h"
#include "engine/support/status_macros.h"

namespace kiln {
namespace {

absl::StatusOr<Type> WriteRowRelation(const TypeRelationInput& in) {
  KILN_ASSIGN_OR_RETURN(const TensorTypeNode* rows, TensorArg(in, 0));
  KILN_ASSIGN_OR_RETURN(const TensorTypeNode* row, TensorArg(in, 2));
  if (rows->shape.empty()) {
    return absl::InvalidArgumentError("the rows (argument 0) must have rank 1 or more");
  }
  std::vector<Dim> row_shape(rows->shape.begin() + 1, rows->shape.end());
  Type expected = MakeTensorType(row_shape, rows->dtype);
  if (!StructuralEqual(Type(in.args[1]), expected)) {
    return absl::InvalidArgumentError(absl::StrCat("the value (argument 1) must be one row, ",
                                                   TypeToString(expected), ", got ",
                                                   TypeToString(in.args[1])));
  }
  if (row->dtype != DataType::kInt64 || !row->shape.empty()) {
    return absl::InvalidArgumentError(absl::StrCat("the row (argument 2) must be an int64 scalar, got ",
                                                   TypeToString(in.args[2])));
  }
  return in.args[0];
}

absl::StatusOr<std::vector<te::Tensor>> WriteRowCompute(const ComputeInput& in) {
  KILN_RETURN_IF_ERROR(compute::ExpectInputs(in, 3, "write_row"));
  KILN_ASSIGN_OR_RETURN(compute::ResultTensor result, compute::TensorResult(in, "write_row"));
  const te::Tensor& rows = in.inputs[0];
  const te::Tensor& value = in.inputs[1];
  const te::Tensor& row = in.inputs[2];
  return std::vector<te::Tensor>{te::Compute(
      "T_write_row", result.shape, {rows, value, row},
      [&](const std::vector<loop::Var>& i) -> te::ComputeBody {
        std::vector<loop::PrimExpr> p = compute::AsExprs(i);
        std::vector<loop::PrimExpr> within(p.begin() + 1, p.end());
        return loop::MakeSelect(loop::Equal(p[0], row(std::vector<loop::PrimExpr>{})),
                                value(within), rows(p));
      },
      "injective")};
}

}  // namespace

void RegisterWriteRowOp(OpRegistry& registry) {
  OpEntry entry;
  entry.name = "write_row";
  entry.summary = "rows with row `row` (axis 0, known at run time) replaced by value";
  entry.pattern = OpPattern::kOpaque;
  entry.min_args = entry.max_args = 3;
  entry.relation = WriteRowRelation;
  entry.compute = WriteRowCompute;
  registry.Register(std::move(entry));
}

}  // namespace kiln
