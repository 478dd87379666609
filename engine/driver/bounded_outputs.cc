// Bounded outputs: reading the module attribute and cutting outputs after a run.
#include "engine/driver/bounded_outputs.h"

#include <algorithm>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "engine/frontend/onnx/importer.h"
#include "engine/loop/prim_func.h"

namespace kiln::driver {

absl::StatusOr<std::vector<lower::BoundedOutput>> ReadBoundedOutputs(
    const IRModule& imported, const lower::LoweredModule& lowered) {
  std::vector<lower::BoundedOutput> bounded;
  if (!imported || !imported->attrs) return bounded;
  const AttrValue* attr = imported->attrs->Find(kBoundedOutputsAttr);
  if (attr == nullptr) return bounded;
  auto malformed = [&](const std::string& why) {
    return absl::InvalidArgumentError(
        absl::StrCat("module attribute ", std::string(kBoundedOutputsAttr), ": ", why));
  };
  if (!attr->is<AttrValue::Array>()) return malformed("expected an array of ints");
  const AttrValue::Array& values = attr->get<AttrValue::Array>();
  if (values.size() % 3 != 0) return malformed("expected (output, axis, length) triples");
  const auto* main = lowered.module->Lookup("main").as<loop::PrimFuncNode>();
  if (main == nullptr) return absl::InternalError("the lowered module has no main");
  const int num_outputs = lowered.num_outputs;
  auto output_buffer = [&](int64_t i) { return main->param_buffer(lowered.num_inputs + i); };
  std::vector<bool> is_length(num_outputs, false), is_bounded(num_outputs, false);
  for (size_t i = 0; i < values.size(); i += 3) {
    int64_t triple[3];
    for (int k = 0; k < 3; ++k) {
      if (!values[i + k].is<int64_t>()) return malformed("expected an array of ints");
      triple[k] = values[i + k].get<int64_t>();
    }
    auto [output, axis, length] = triple;
    if (output < 0 || output >= num_outputs || length < 0 || length >= num_outputs ||
        output == length) {
      return malformed(absl::StrCat("outputs ", output, " and ", length, " are not two of main's ",
                                    num_outputs, " outputs"));
    }
    if (axis < 0 || axis >= static_cast<int64_t>(output_buffer(output)->shape.size())) {
      return malformed(absl::StrCat("output ", output, " has no axis ", axis));
    }
    if (output_buffer(length)->dtype != DataType::kInt64 || !output_buffer(length)->shape.empty()) {
      return malformed(absl::StrCat("output ", length, " must be an int64 scalar"));
    }
    if (is_bounded[output] || is_length[length]) {
      return malformed(absl::StrCat("output ", output, " or ", length, " is listed twice"));
    }
    is_bounded[output] = true;
    is_length[length] = true;
    bounded.push_back({static_cast<int>(output), static_cast<int>(axis), static_cast<int>(length)});
  }
  for (const lower::BoundedOutput& b : bounded) {
    if (is_length[b.output]) return malformed(absl::StrCat("output ", b.output, " is a length"));
  }
  return bounded;
}

namespace {

// `tensor` with only the first `keep` positions of `axis` (row-major: the outer positions each
// copy a block of keep x inner elements).
loop::HostTensor CutAlong(const loop::HostTensor& tensor, int axis, int64_t keep) {
  std::vector<int64_t> shape = tensor.shape;
  const int64_t extent = shape[axis];
  shape[axis] = keep;
  loop::HostTensor cut = loop::HostTensor::Zeros(tensor.dtype, shape);
  int64_t outer = 1, inner = DataTypeBytes(tensor.dtype);
  for (int d = 0; d < axis; ++d) outer *= tensor.shape[d];
  for (size_t d = axis + 1; d < tensor.shape.size(); ++d) inner *= tensor.shape[d];
  for (int64_t o = 0; o < outer && keep > 0; ++o) {
    std::memcpy(cut.bytes.data() + o * keep * inner, tensor.bytes.data() + o * extent * inner,
                static_cast<size_t>(keep * inner));
  }
  cut.strings = tensor.strings;  // a string tensor's words point into its storage
  return cut;
}

}  // namespace

absl::Status CutBoundedOutputs(const std::vector<lower::BoundedOutput>& bounded,
                               std::vector<loop::HostTensor>* outputs,
                               std::vector<std::string>* names) {
  if (bounded.empty()) return absl::OkStatus();
  std::vector<bool> drop(outputs->size(), false);
  for (const lower::BoundedOutput& b : bounded) {
    if (b.output >= static_cast<int>(outputs->size()) ||
        b.length >= static_cast<int>(outputs->size())) {
      return absl::InternalError("bounded outputs: fewer outputs than the compile's");
    }
    const loop::HostTensor& length = (*outputs)[b.length];
    loop::HostTensor& values = (*outputs)[b.output];
    if (length.dtype != DataType::kInt64 || length.NumElements() != 1) {
      return absl::InternalError(absl::StrCat("output ", b.length, " is not an int64 scalar"));
    }
    int64_t keep = length.Values<int64_t>()[0];
    if (keep < 0 || keep > values.shape[b.axis]) {
      return absl::FailedPreconditionError(
          absl::StrCat("output ", b.output, "'s run-time length ", keep, " is outside [0, ",
                       values.shape[b.axis], "], the extent it was compiled with"));
    }
    values = CutAlong(values, b.axis, keep);
    drop[b.length] = true;
  }
  size_t kept = 0;
  for (size_t i = 0; i < outputs->size(); ++i) {
    if (drop[i]) continue;
    if (kept != i) {
      (*outputs)[kept] = std::move((*outputs)[i]);
      if (names != nullptr) (*names)[kept] = std::move((*names)[i]);
    }
    ++kept;
  }
  outputs->resize(kept);
  if (names != nullptr) names->resize(kept);
  return absl::OkStatus();
}

}  // namespace kiln::driver
