// Shared by the converter files of the transform and reduce families.
// RegisterTransformConverters (transform_converters.cc: layout and shape ops)
// also registers the parts kept in their own files so each stays readable:
// indexing and data-dependent ops, and the ops that produce constants.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "engine/frontend/onnx/converter_table.h"

namespace kiln::onnx_frontend {

void RegisterIndexConverters(ConverterTable& table);     // index_converters.cc
void RegisterConstantConverters(ConverterTable& table);  // constant_converters.cc

// An int list that ONNX moved from attribute `attr` (older opsets) to input
// `input` (newer ones): the input when present (it must be constant), else
// the attribute, else nullopt.
absl::StatusOr<std::optional<std::vector<int64_t>>> IntsFromInputOrAttr(const ConvertContext& ctx,
                                                                        size_t input,
                                                                        const std::string& attr,
                                                                        const char* what);

// A constant input holding one number (a scalar or a one-element tensor of
// any integer or float dtype), as int64. Errors name the input as `what`.
absl::StatusOr<int64_t> ConstantScalarInt(const ConvertContext& ctx, size_t input,
                                          const char* what);

// `x` reshaped to one dimension (ONNX ops that flatten when given no axis).
absl::StatusOr<Expr> Flattened(ConvertContext& ctx, const Expr& x);

// Slice (opset 10+) whose starts only a run knows but whose ends are starts plus a constant: a
// slice of static shape at a run-time offset (run_time_slice.cc).
absl::StatusOr<std::vector<Expr>> ConvertRunTimeStartSlice(ConvertContext& ctx);

inline std::vector<Expr> Outputs(Expr single) { return std::vector<Expr>{std::move(single)}; }

}  // namespace kiln::onnx_frontend
