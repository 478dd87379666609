// ConvertContext: attribute access, typed builders, and TensorProto reading.
#include "engine/frontend/onnx/convert_context.h"

#include <charconv>
#include <cstring>
#include <set>

#include "absl/strings/str_cat.h"
#include "engine/ir/structural_equal.h"
#include "engine/op/op_registry.h"
#include "engine/op/type_relations.h"
#include "engine/op/type_inference.h"
#include "engine/support/request_limits.h"
#include "engine/support/status_macros.h"

namespace kiln::onnx_frontend {

std::string ConvertContext::Describe() const {
  return absl::StrCat("ONNX node '", span_ ? span_->source->name : node_.name(), "' (#",
                      node_index_, ", ", node_.op_type(), ")");
}

std::optional<std::vector<int64_t>> ConvertContext::DeclaredOutputShape(size_t i) const {
  if (declared_shapes_ == nullptr || i >= static_cast<size_t>(node_.output_size())) {
    return std::nullopt;
  }
  auto it = declared_shapes_->find(node_.output(static_cast<int>(i)));
  if (it == declared_shapes_->end()) return std::nullopt;
  return it->second;
}

absl::Status ConvertContext::Error(absl::string_view message) const {
  return absl::InvalidArgumentError(absl::StrCat(Describe(), ": ", std::string(message)));
}

absl::Status ConvertContext::ChargeBytes(int64_t bytes, std::string_view tensor) const {
  if (options_.budget == nullptr) return absl::OkStatus();
  return options_.budget->Charge(bytes, absl::StrCat(Describe(), ": ", std::string(tensor)));
}

absl::StatusOr<Expr> ConvertContext::Input(size_t i) const {
  if (!HasInput(i)) return Error(absl::StrCat("input ", i, " is required"));
  return inputs_[i];
}

absl::StatusOr<const TensorTypeNode*> ConvertContext::InputTensorType(size_t i) const {
  KILN_ASSIGN_OR_RETURN(Expr input, Input(i));
  const auto* type = input->checked_type.as<TensorTypeNode>();
  if (type == nullptr) return Error(absl::StrCat("input ", i, " must be a tensor"));
  return type;
}

TensorData ConvertContext::ConstantInput(size_t i) const {
  if (!HasInput(i)) return nullptr;
  if (const auto* constant = inputs_[i].as<ConstantNode>()) return constant->data;
  // A graph input whose value the caller fixed (OnnxImportOptions::input_values).
  if (const auto* var = inputs_[i].as<VarNode>()) {
    auto it = options_.input_values.find(var->name_hint);
    if (it != options_.input_values.end()) return it->second;
  }
  return nullptr;
}

absl::StatusOr<std::vector<int64_t>> ConvertContext::ConstantInts(size_t i,
                                                                  const char* what) const {
  TensorData data = ConstantInput(i);
  if (!data) {
    return Error(absl::StrCat("input ", i, " (", what,
                              ") must be a constant or computable from static shapes"));
  }
  std::vector<int64_t> values;
  int64_t n = data->NumElements();
  values.reserve(n);
  if (data->dtype == DataType::kInt64) {
    for (int64_t k = 0; k < n; ++k) values.push_back(data->data<int64_t>()[k]);
  } else if (data->dtype == DataType::kInt32) {
    for (int64_t k = 0; k < n; ++k) values.push_back(data->data<int32_t>()[k]);
  } else {
    return Error(absl::StrCat("input ", i, " (", what, ") must be int32 or int64, got ",
                              DataTypeName(data->dtype)));
  }
  return values;
}

const onnx::AttributeProto* ConvertContext::FindAttr(const std::string& name) const {
  for (const onnx::AttributeProto& attr : node_.attribute()) {
    if (attr.name() == name) return &attr;
  }
  return nullptr;
}

absl::StatusOr<int64_t> ConvertContext::IntAttr(const std::string& name,
                                                std::optional<int64_t> fallback) const {
  const onnx::AttributeProto* attr = FindAttr(name);
  if (attr == nullptr) {
    if (fallback) return *fallback;
    return Error(absl::StrCat("attribute '", name, "' is required"));
  }
  if (attr->type() != onnx::AttributeProto::INT) {
    return Error(absl::StrCat("attribute '", name, "' must be an int"));
  }
  return attr->i();
}

namespace {
double ShortestDecimal(float value) {
  char buffer[32];
  auto result = std::to_chars(buffer, buffer + sizeof(buffer), value);
  double out = value;
  std::from_chars(buffer, result.ptr, out);
  return out;
}
}  // namespace

absl::StatusOr<double> ConvertContext::FloatAttr(const std::string& name,
                                                 std::optional<float> fallback) const {
  const onnx::AttributeProto* attr = FindAttr(name);
  if (attr == nullptr) {
    if (fallback) return ShortestDecimal(*fallback);
    return Error(absl::StrCat("attribute '", name, "' is required"));
  }
  if (attr->type() == onnx::AttributeProto::INT) return static_cast<double>(attr->i());
  if (attr->type() != onnx::AttributeProto::FLOAT) {
    return Error(absl::StrCat("attribute '", name, "' must be a float"));
  }
  return ShortestDecimal(attr->f());
}

absl::StatusOr<std::string> ConvertContext::StringAttr(const std::string& name,
                                                       std::optional<std::string> fallback) const {
  const onnx::AttributeProto* attr = FindAttr(name);
  if (attr == nullptr) {
    if (fallback) return *fallback;
    return Error(absl::StrCat("attribute '", name, "' is required"));
  }
  if (attr->type() != onnx::AttributeProto::STRING) {
    return Error(absl::StrCat("attribute '", name, "' must be a string"));
  }
  return attr->s();
}

absl::StatusOr<std::vector<int64_t>> ConvertContext::IntsAttr(
    const std::string& name, std::optional<std::vector<int64_t>> fallback) const {
  const onnx::AttributeProto* attr = FindAttr(name);
  if (attr == nullptr) {
    if (fallback) return *fallback;
    return Error(absl::StrCat("attribute '", name, "' is required"));
  }
  if (attr->type() != onnx::AttributeProto::INTS) {
    return Error(absl::StrCat("attribute '", name, "' must be a list of ints"));
  }
  return std::vector<int64_t>(attr->ints().begin(), attr->ints().end());
}

absl::StatusOr<std::vector<float>> ConvertContext::FloatsAttr(
    const std::string& name, std::optional<std::vector<float>> fallback) const {
  const onnx::AttributeProto* attr = FindAttr(name);
  if (attr == nullptr) {
    if (fallback) return *fallback;
    return Error(absl::StrCat("attribute '", name, "' is required"));
  }
  if (attr->type() != onnx::AttributeProto::FLOATS) {
    return Error(absl::StrCat("attribute '", name, "' must be a list of floats"));
  }
  return std::vector<float>(attr->floats().begin(), attr->floats().end());
}

absl::StatusOr<TensorData> ConvertContext::TensorAttr(const std::string& name) const {
  const onnx::AttributeProto* attr = FindAttr(name);
  if (attr == nullptr || attr->type() != onnx::AttributeProto::TENSOR) {
    return Error(absl::StrCat("attribute '", name, "' must be a tensor"));
  }
  auto data = TensorFromProto(attr->t(), options_.max_tensor_elements, options_.budget);
  if (!data.ok()) {
    std::string message = absl::StrCat(Describe(), ": attribute '", name, "': ",
                                       std::string(data.status().message()));
    // Over the budget stays RESOURCE_EXHAUSTED; the rest is a bad model.
    return absl::Status(data.status().code() == absl::StatusCode::kResourceExhausted
                            ? absl::StatusCode::kResourceExhausted
                            : absl::StatusCode::kInvalidArgument,
                        message);
  }
  return data;
}

namespace {

bool MentionsString(const Type& type) {
  if (const auto* tensor = type.as<TensorTypeNode>()) return tensor->dtype == DataType::kString;
  if (const auto* tuple = type.as<TupleTypeNode>()) {
    for (const Type& field : tuple->fields) {
      if (MentionsString(field)) return true;
    }
  }
  return false;
}

// The graph ops that may take or give string elements: they only move elements, or are the
// casts and string ops, whose kernels call libkiln_rt. Every other op would compute with the
// pointer words, so a model that needs one is refused here, naming its node.
bool TakesStrings(const std::string& op) {
  static const auto* ops = new std::set<std::string>{
      "cast",      "string.change_case", "string.in_set", "compress",   "reshape",
      "string.full_like",
      "squeeze",   "expand_dims",        "transpose",     "take",       "concatenate",
      "assert",    "where",              "strided_slice"};
  return ops->count(op) != 0;
}

}  // namespace

absl::Status ConvertContext::CheckStringUse(const std::string& op,
                                            const std::vector<Type>& arg_types,
                                            const Type& result) const {
  if (TakesStrings(op)) return absl::OkStatus();
  for (size_t i = 0; i < arg_types.size(); ++i) {
    if (MentionsString(arg_types[i])) {
      return Error(absl::StrCat("Kiln's ", op, " does not take string tensors (argument ", i,
                                " is one); strings go only through Cast, StringNormalizer and "
                                "ops that move elements (Reshape, Transpose, Gather, Concat, ...)"));
    }
  }
  if (MentionsString(result)) {
    return Error(absl::StrCat("Kiln's ", op, " cannot make a string tensor"));
  }
  return absl::OkStatus();
}

absl::StatusOr<Expr> ConvertContext::Call(const std::string& op, std::vector<Expr> args,
                                          Attrs attrs) {
  const OpEntry* entry = OpRegistry::Global().Find(op);
  KILN_CHECK(entry != nullptr) << "converter uses unregistered operator " << op;
  auto normalized = NormalizeAttrs(*entry, attrs);
  if (!normalized.ok()) return Error(normalized.status().message());
  std::vector<Type> arg_types;
  arg_types.reserve(args.size());
  for (const Expr& arg : args) {
    KILN_CHECK(arg && arg->checked_type) << "converter passed an untyped argument to " << op;
    arg_types.push_back(arg->checked_type);
  }
  auto type = InferCallType(*entry, arg_types, *normalized);
  if (!type.ok()) return Error(type.status().message());
  KILN_RETURN_IF_ERROR(CheckStringUse(op, arg_types, *type));
  return Expr(MakeRef<CallNode>(GetOp(op), std::move(args), std::move(*normalized),
                                ExprFields{span_, std::move(*type), nullptr}));
}

Expr ConvertContext::Constant(TensorData data) {
  std::vector<Dim> dims;
  for (int64_t d : data->shape) dims.push_back(Dim::Static(d));
  Type type = MakeTensorType(std::move(dims), data->dtype);
  return MakeRef<ConstantNode>(std::move(data), ExprFields{span_, std::move(type), nullptr});
}

absl::StatusOr<Expr> ConvertContext::TupleGetItem(const Expr& tuple, int index) {
  const auto* type = tuple->checked_type.as<TupleTypeNode>();
  if (type == nullptr || index < 0 || index >= static_cast<int>(type->fields.size())) {
    return Error(absl::StrCat("output ", index, " does not exist"));
  }
  return Expr(MakeRef<TupleGetItemNode>(tuple, index,
                                        ExprFields{span_, type->fields[index], nullptr}));
}

absl::StatusOr<Expr> ConvertContext::Tuple(std::vector<Expr> fields) {
  std::vector<Type> types;
  for (const Expr& field : fields) types.push_back(field->checked_type);
  return Expr(MakeRef<TupleNode>(std::move(fields),
                                 ExprFields{span_, MakeTupleType(std::move(types)), nullptr}));
}

absl::StatusOr<Expr> ConvertContext::If(const Expr& cond, const Expr& then_value,
                                         const Expr& else_value) {
  const auto* cond_type = cond->checked_type.as<TensorTypeNode>();
  if (cond_type == nullptr || cond_type->dtype != DataType::kBool || !cond_type->shape.empty()) {
    return Error(absl::StrCat("the condition must be a bool scalar, got ",
                              TypeToString(cond->checked_type)));
  }
  if (!StructuralEqual(then_value->checked_type, else_value->checked_type)) {
    return Error(absl::StrCat("the branches give ", TypeToString(then_value->checked_type),
                              " and ", TypeToString(else_value->checked_type)));
  }
  return Expr(MakeRef<IfNode>(cond, then_value, else_value,
                              ExprFields{span_, then_value->checked_type, nullptr}));
}

absl::StatusOr<DataType> DataTypeFromOnnx(int32_t onnx_type) {
  switch (onnx_type) {
    case onnx::TensorProto::FLOAT: return DataType::kFloat32;
    case onnx::TensorProto::UINT8: return DataType::kUInt8;
    case onnx::TensorProto::INT8: return DataType::kInt8;
    case onnx::TensorProto::UINT16: return DataType::kUInt16;
    case onnx::TensorProto::INT16: return DataType::kInt16;
    case onnx::TensorProto::INT32: return DataType::kInt32;
    case onnx::TensorProto::INT64: return DataType::kInt64;
    case onnx::TensorProto::BOOL: return DataType::kBool;
    case onnx::TensorProto::FLOAT16: return DataType::kFloat16;
    case onnx::TensorProto::DOUBLE: return DataType::kFloat64;
    case onnx::TensorProto::UINT32: return DataType::kUInt32;
    case onnx::TensorProto::UINT64: return DataType::kUInt64;
    case onnx::TensorProto::BFLOAT16: return DataType::kBFloat16;
    case onnx::TensorProto::STRING: return DataType::kString;
    default: break;
  }
  std::string name = onnx::TensorProto::DataType_IsValid(onnx_type)
                         ? onnx::TensorProto::DataType_Name(
                               static_cast<onnx::TensorProto::DataType>(onnx_type))
                         : absl::StrCat("#", onnx_type);
  return absl::InvalidArgumentError(absl::StrCat("element type ", name, " is not supported"));
}

namespace {

// Copies `n` elements of a repeated field into bytes of `dtype`.
template <typename Field, typename Convert>
std::string PackElements(const Field& field, int64_t n, DataType dtype, Convert convert) {
  int width = DataTypeBytes(dtype);
  std::string bytes(static_cast<size_t>(n * width), '\0');
  for (int64_t i = 0; i < n; ++i) convert(field.Get(static_cast<int>(i)), bytes.data() + i * width);
  return bytes;
}

template <typename T>
auto StoreAs() {
  return [](auto value, char* out) {
    T v = static_cast<T>(value);
    std::memcpy(out, &v, sizeof(T));
  };
}

}  // namespace

namespace {

absl::StatusOr<TensorData> ReadTensorProto(const onnx::TensorProto& proto,
                                           int64_t max_elements, CompileBudget* budget,
                                           std::string* stolen_raw_data) {
  std::string name = proto.name().empty() ? "" : absl::StrCat(" '", proto.name(), "'");
  auto fail = [&](std::string message) {
    return absl::InvalidArgumentError(absl::StrCat("tensor", name, ": ", message));
  };
  if (proto.data_location() == onnx::TensorProto::EXTERNAL) {
    return fail("external data is not supported; embed the weights in the model");
  }
  auto dtype = DataTypeFromOnnx(proto.data_type());
  if (!dtype.ok()) return fail(std::string(dtype.status().message()));
  if (*dtype == DataType::kString) {
    return fail("string constants (initializers, Constant nodes) are not supported; string "
                "tensors may be graph inputs and outputs and what Cast and StringNormalizer "
                "make of them");
  }
  if (proto.dims_size() > kMaxTensorRank) {
    return fail(absl::StrCat(proto.dims_size(), " dimensions, more than the limit of ",
                             kMaxTensorRank));
  }
  std::vector<int64_t> shape;
  int64_t count = 1;
  for (int64_t dim : proto.dims()) {
    if (dim < 0) return fail(absl::StrCat("negative dimension ", dim));
    // Each extent on its own too: an empty tensor must not carry a 2^62 extent into shape math.
    if (dim > max_elements) {
      return fail(absl::StrCat("dimension ", dim, " exceeds the limit of ", max_elements));
    }
    if (dim != 0 && count > INT64_MAX / dim) return fail("element count overflows int64");
    count *= dim;
    shape.push_back(dim);
  }
  if (count > max_elements) {
    return fail(absl::StrCat(count, " elements exceed the limit of ", max_elements));
  }
  int width = DataTypeBytes(*dtype);
  if (budget != nullptr) {
    absl::Status charged = budget->Charge(count * width, absl::StrCat("tensor", name));
    if (!charged.ok()) return charged;
  }
  if (proto.has_raw_data()) {
    if (static_cast<int64_t>(proto.raw_data().size()) != count * width) {
      return fail(absl::StrCat("raw_data holds ", proto.raw_data().size(), " bytes, expected ",
                               count * width, " for dims ", shape.size(), "-d with ", count,
                               " elements"));
    }
    if (stolen_raw_data != nullptr) {
      return MakeTensorData(*dtype, std::move(shape), std::move(*stolen_raw_data));
    }
    return MakeTensorData(*dtype, std::move(shape), proto.raw_data());
  }
  auto check_count = [&](int64_t have) -> absl::Status {
    if (have != count) {
      return fail(absl::StrCat("holds ", have, " values, expected ", count, " from its dims"));
    }
    return absl::OkStatus();
  };
  std::string bytes;
  switch (*dtype) {
    case DataType::kFloat32:
      KILN_RETURN_IF_ERROR(check_count(proto.float_data_size()));
      bytes = PackElements(proto.float_data(), count, *dtype, StoreAs<float>());
      break;
    case DataType::kFloat64:
      KILN_RETURN_IF_ERROR(check_count(proto.double_data_size()));
      bytes = PackElements(proto.double_data(), count, *dtype, StoreAs<double>());
      break;
    case DataType::kInt64:
      KILN_RETURN_IF_ERROR(check_count(proto.int64_data_size()));
      bytes = PackElements(proto.int64_data(), count, *dtype, StoreAs<int64_t>());
      break;
    case DataType::kUInt32:
    case DataType::kUInt64:
      KILN_RETURN_IF_ERROR(check_count(proto.uint64_data_size()));
      bytes = *dtype == DataType::kUInt32
                  ? PackElements(proto.uint64_data(), count, *dtype, StoreAs<uint32_t>())
                  : PackElements(proto.uint64_data(), count, *dtype, StoreAs<uint64_t>());
      break;
    default:
      // int32_data carries every narrower type (float16/bfloat16 as their bits).
      KILN_RETURN_IF_ERROR(check_count(proto.int32_data_size()));
      switch (width) {
        case 1: bytes = PackElements(proto.int32_data(), count, *dtype, StoreAs<uint8_t>()); break;
        case 2: bytes = PackElements(proto.int32_data(), count, *dtype, StoreAs<uint16_t>()); break;
        default: bytes = PackElements(proto.int32_data(), count, *dtype, StoreAs<int32_t>()); break;
      }
      if (*dtype == DataType::kBool) {
        for (char& c : bytes) c = c != 0 ? 1 : 0;
      }
      break;
  }
  return MakeTensorData(*dtype, std::move(shape), std::move(bytes));
}

}  // namespace

absl::StatusOr<TensorData> TensorFromProto(const onnx::TensorProto& proto,
                                           int64_t max_elements, CompileBudget* budget) {
  return ReadTensorProto(proto, max_elements, budget, nullptr);
}

absl::StatusOr<TensorData> TakeTensorFromProto(onnx::TensorProto* proto, int64_t max_elements,
                                               CompileBudget* budget) {
  return ReadTensorProto(*proto, max_elements, budget,
                         proto->has_raw_data() ? proto->mutable_raw_data() : nullptr);
}

}  // namespace kiln::onnx_frontend
