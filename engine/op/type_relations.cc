// Shared type-relation helpers.
#include "engine/op/type_relations.h"

#include "absl/strings/str_cat.h"
#include "engine/support/status_macros.h"

namespace kiln {

absl::StatusOr<const TensorTypeNode*> TensorArg(const TypeRelationInput& in, size_t index) {
  if (index >= in.args.size()) {
    return absl::InvalidArgumentError(absl::StrCat("missing argument ", index));
  }
  const auto* tensor = in.args[index].as<TensorTypeNode>();
  if (tensor == nullptr) {
    return absl::InvalidArgumentError(absl::StrCat("argument ", index, " must be a tensor, got ",
                                                   TypeToString(in.args[index])));
  }
  return tensor;
}

absl::StatusOr<std::vector<Dim>> BroadcastShapes(const std::vector<Dim>& a,
                                                 const std::vector<Dim>& b) {
  size_t rank = std::max(a.size(), b.size());
  std::vector<Dim> out(rank);
  for (size_t i = 0; i < rank; ++i) {
    // Align from the right.
    const Dim* da = i < rank - a.size() ? nullptr : &a[i - (rank - a.size())];
    const Dim* db = i < rank - b.size() ? nullptr : &b[i - (rank - b.size())];
    if (da == nullptr) { out[i] = *db; continue; }
    if (db == nullptr) { out[i] = *da; continue; }
    if (*da == *db) { out[i] = *da; continue; }
    if (da->is_static() && da->value == 1) { out[i] = *db; continue; }
    if (db->is_static() && db->value == 1) { out[i] = *da; continue; }
    if (da->is_static() && db->is_static()) {
      return absl::InvalidArgumentError(absl::StrCat("shapes ", ShapeToString(a), " and ",
                                                     ShapeToString(b),
                                                     " do not broadcast (dim ", i, ": ",
                                                     da->value, " vs ", db->value, ")"));
    }
    if (da->is_static()) { out[i] = *da; continue; }
    if (db->is_static()) { out[i] = *db; continue; }
    out[i] = Dim::Symbolic();
  }
  return out;
}

absl::StatusOr<int64_t> NormalizeAxis(int64_t axis, int64_t rank, const char* what) {
  if (axis < -rank || axis >= rank) {
    return absl::InvalidArgumentError(absl::StrCat(what, " ", axis, " is out of range for rank ",
                                                   rank, " (expected ", -rank, " to ", rank - 1,
                                                   ")"));
  }
  return axis < 0 ? axis + rank : axis;
}

namespace {
const AttrValue& Get(const AttrsNode& attrs, std::string_view key) {
  const AttrValue* value = attrs.Find(key);
  KILN_CHECK(value != nullptr) << "attribute " << key << " missing after normalization";
  return *value;
}
}  // namespace

int64_t IntAttr(const AttrsNode& attrs, std::string_view key) {
  return Get(attrs, key).get<int64_t>();
}
double FloatAttr(const AttrsNode& attrs, std::string_view key) {
  return Get(attrs, key).get<double>();
}
bool BoolAttr(const AttrsNode& attrs, std::string_view key) { return Get(attrs, key).get<bool>(); }
const std::string& StringAttr(const AttrsNode& attrs, std::string_view key) {
  return Get(attrs, key).get<std::string>();
}
DataType DataTypeAttr(const AttrsNode& attrs, std::string_view key) {
  return Get(attrs, key).get<DataType>();
}
std::vector<int64_t> IntArrayAttr(const AttrsNode& attrs, std::string_view key) {
  std::vector<int64_t> out;
  for (const AttrValue& v : Get(attrs, key).get<AttrValue::Array>()) out.push_back(v.get<int64_t>());
  return out;
}
std::vector<Dim> ShapeAttr(const AttrsNode& attrs, std::string_view key) {
  return Get(attrs, key).get<ShapeValue>().dims;
}

std::string ShapeToString(const std::vector<Dim>& dims) {
  std::string out = "(";
  for (size_t i = 0; i < dims.size(); ++i) {
    if (i > 0) out += ", ";
    out += dims[i].is_static() ? absl::StrCat(dims[i].value)
                               : (dims[i].symbol.empty() ? "?" : dims[i].symbol);
  }
  return out + ")";
}

std::string TypeToString(const Type& type) {
  if (!type) return "<unknown>";
  if (const auto* t = type.as<TensorTypeNode>()) {
    return absl::StrCat("Tensor[", ShapeToString(t->shape), ", ", DataTypeName(t->dtype), "]");
  }
  if (const auto* t = type.as<TupleTypeNode>()) {
    std::string out = "(";
    for (size_t i = 0; i < t->fields.size(); ++i) {
      absl::StrAppend(&out, i ? ", " : "", TypeToString(t->fields[i]));
    }
    return out + (t->fields.size() == 1 ? ",)" : ")");
  }
  return "fn";
}

absl::StatusOr<int64_t> NumElements(const std::vector<Dim>& dims) {
  int64_t n = 1;
  bool symbolic = false;
  for (const Dim& d : dims) {
    if (!d.is_static()) {
      symbolic = true;
      continue;
    }
    if (d.value != 0 && n > INT64_MAX / d.value) {
      return absl::InvalidArgumentError(
          absl::StrCat("element count of shape ", ShapeToString(dims), " overflows int64"));
    }
    n *= d.value;
  }
  return symbolic ? -1 : n;
}

absl::StatusOr<Type> IdentityRelation(const TypeRelationInput& in) {
  KILN_ASSIGN_OR_RETURN(const TensorTypeNode* t, TensorArg(in, 0));
  (void)t;
  return in.args[0];
}

namespace {
absl::StatusOr<Type> Broadcast(const TypeRelationInput& in, bool to_bool) {
  KILN_ASSIGN_OR_RETURN(const TensorTypeNode* first, TensorArg(in, 0));
  std::vector<Dim> shape = first->shape;
  for (size_t i = 1; i < in.args.size(); ++i) {
    KILN_ASSIGN_OR_RETURN(const TensorTypeNode* t, TensorArg(in, i));
    if (t->dtype != first->dtype) {
      return absl::InvalidArgumentError(absl::StrCat("argument ", i, " has dtype ",
                                                     DataTypeName(t->dtype), ", expected ",
                                                     DataTypeName(first->dtype),
                                                     " like argument 0"));
    }
    KILN_ASSIGN_OR_RETURN(shape, BroadcastShapes(shape, t->shape));
  }
  return Type(MakeTensorType(std::move(shape), to_bool ? DataType::kBool : first->dtype));
}
}  // namespace

absl::StatusOr<Type> BroadcastRelation(const TypeRelationInput& in) {
  return Broadcast(in, false);
}
absl::StatusOr<Type> BroadcastToBoolRelation(const TypeRelationInput& in) {
  return Broadcast(in, true);
}

std::string CheckNonNegative(const AttrValue& value) {
  return value.get<int64_t>() < 0 ? "must be >= 0" : "";
}
std::string CheckPositive(const AttrValue& value) {
  return value.get<int64_t>() <= 0 ? "must be > 0" : "";
}
std::string CheckAllPositive(const AttrValue& value) {
  for (const AttrValue& v : value.get<AttrValue::Array>()) {
    if (v.get<int64_t>() <= 0) return "every element must be > 0";
  }
  return "";
}
std::string CheckAllNonNegative(const AttrValue& value) {
  for (const AttrValue& v : value.get<AttrValue::Array>()) {
    if (v.get<int64_t>() < 0) return "every element must be >= 0";
  }
  return "";
}

}  // namespace kiln
