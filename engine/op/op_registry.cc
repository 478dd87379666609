// The operator registry and attribute normalization.
#include "engine/op/op_registry.h"

#include <mutex>

#include "absl/strings/str_cat.h"

namespace kiln {

const char* OpPatternName(OpPattern pattern) {
  switch (pattern) {
    case OpPattern::kElementwise: return "elementwise";
    case OpPattern::kBroadcast: return "broadcast";
    case OpPattern::kInjective: return "injective";
    case OpPattern::kReduction: return "reduction";
    case OpPattern::kOutElementwiseFusable: return "out_elementwise_fusable";
    case OpPattern::kTuple: return "tuple";
    case OpPattern::kOpaque: return "opaque";
  }
  return "?";
}

const char* AttrKindName(AttrKind kind) {
  switch (kind) {
    case AttrKind::kInt: return "int";
    case AttrKind::kFloat: return "float";
    case AttrKind::kBool: return "bool";
    case AttrKind::kString: return "string";
    case AttrKind::kDataType: return "dtype";
    case AttrKind::kShape: return "shape";
    case AttrKind::kIntArray: return "int array";
    case AttrKind::kFloatArray: return "float array";
    case AttrKind::kAny: return "any";
  }
  return "?";
}

const AttrField* OpEntry::FindAttr(std::string_view key) const {
  for (const AttrField& field : attrs) {
    if (field.name == key) return &field;
  }
  return nullptr;
}

const OpRegistry& OpRegistry::Global() {
  static const OpRegistry* registry = [] {
    auto* r = new OpRegistry();
    RegisterBuiltinOps(*r);
    return r;
  }();
  return *registry;
}

OpEntry& OpRegistry::Register(OpEntry entry) {
  std::string name = entry.name;
  entry.op = GetOp(name);
  auto [it, inserted] = entries_.emplace(name, std::move(entry));
  KILN_CHECK(inserted) << "operator " << name << " registered twice";
  // std::map never moves its values: the pointer stays valid.
  by_handle_.emplace(it->second.op.get(), &it->second);
  return it->second;
}

const OpEntry* OpRegistry::Find(std::string_view name) const {
  auto it = entries_.find(name);
  return it == entries_.end() ? nullptr : &it->second;
}

const OpEntry& OpRegistry::Get(std::string_view name) const {
  const OpEntry* entry = Find(name);
  KILN_CHECK(entry != nullptr) << "operator " << name << " is not registered";
  return *entry;
}

const OpEntry* OpRegistry::FindCallee(const Expr& callee) const {
  if (!callee.defined()) return nullptr;
  auto it = by_handle_.find(callee.get());
  return it == by_handle_.end() ? nullptr : it->second;
}

void OpRegistry::SetCompute(std::string_view name, ComputeDefinition compute) {
  auto it = entries_.find(name);
  KILN_CHECK(it != entries_.end()) << "compute for unregistered operator " << name;
  KILN_CHECK(!it->second.compute) << "operator " << name << " has two compute definitions";
  it->second.compute = std::move(compute);
}

void OpRegistry::SetSymbolicCompute(std::string_view name, ComputeDefinition compute) {
  SetCompute(name, std::move(compute));
  entries_.find(name)->second.symbolic_compute = true;
}

std::vector<const OpEntry*> OpRegistry::List() const {
  std::vector<const OpEntry*> out;
  out.reserve(entries_.size());
  for (const auto& [name, entry] : entries_) out.push_back(&entry);
  return out;
}

namespace {

// Converts `value` to `kind` when the text form cannot tell them apart (an int
// written for a float, an empty array); nullopt when it does not fit.
std::optional<AttrValue> Coerce(const AttrValue& value, AttrKind kind) {
  switch (kind) {
    case AttrKind::kAny: return value;
    case AttrKind::kInt:
      if (value.is<int64_t>()) return value;
      if (value.is<bool>()) return AttrValue(int64_t{value.get<bool>()});
      return std::nullopt;
    case AttrKind::kFloat:
      if (value.is<double>()) return value;
      if (value.is<int64_t>()) return AttrValue(static_cast<double>(value.get<int64_t>()));
      return std::nullopt;
    case AttrKind::kBool:
      if (value.is<bool>()) return value;
      if (value.is<int64_t>() && (value.get<int64_t>() == 0 || value.get<int64_t>() == 1)) {
        return AttrValue(value.get<int64_t>() == 1);
      }
      return std::nullopt;
    case AttrKind::kString:
      return value.is<std::string>() ? std::optional<AttrValue>(value) : std::nullopt;
    case AttrKind::kDataType:
      return value.is<DataType>() ? std::optional<AttrValue>(value) : std::nullopt;
    case AttrKind::kShape:
      if (value.is<ShapeValue>()) return value;
      if (value.is<AttrValue::Array>()) {
        ShapeValue shape;
        for (const AttrValue& element : value.get<AttrValue::Array>()) {
          if (!element.is<int64_t>() || element.get<int64_t>() < 0) return std::nullopt;
          shape.dims.push_back(Dim::Static(element.get<int64_t>()));
        }
        return AttrValue(std::move(shape));
      }
      return std::nullopt;
    case AttrKind::kIntArray:
    case AttrKind::kFloatArray: {
      if (!value.is<AttrValue::Array>()) return std::nullopt;
      AttrValue::Array out;
      AttrKind element_kind = kind == AttrKind::kIntArray ? AttrKind::kInt : AttrKind::kFloat;
      for (const AttrValue& element : value.get<AttrValue::Array>()) {
        auto coerced = Coerce(element, element_kind);
        if (!coerced) return std::nullopt;
        out.push_back(std::move(*coerced));
      }
      return AttrValue(std::move(out));
    }
  }
  return std::nullopt;
}

}  // namespace

absl::StatusOr<Attrs> NormalizeAttrs(const OpEntry& entry, const Attrs& given) {
  if (given) {
    for (const auto& [key, value] : given->fields) {
      if (entry.FindAttr(key) != nullptr) continue;
      std::string valid;
      for (const AttrField& field : entry.attrs) {
        absl::StrAppend(&valid, valid.empty() ? "" : ", ", field.name);
      }
      return absl::InvalidArgumentError(absl::StrCat(
          "operator ", entry.name, " has no attribute '", key, "' (valid: ",
          valid.empty() ? "none" : valid, ")"));
    }
  }
  std::vector<AttrsNode::Field> fields;
  fields.reserve(entry.attrs.size());
  for (const AttrField& field : entry.attrs) {
    const AttrValue* value = given ? given->Find(field.name) : nullptr;
    if (value == nullptr) {
      if (!field.default_value) {
        return absl::InvalidArgumentError(absl::StrCat(
            "operator ", entry.name, " requires attribute '", field.name, "' (",
            AttrKindName(field.kind), ")"));
      }
      fields.emplace_back(field.name, *field.default_value);
      continue;
    }
    std::optional<AttrValue> coerced = Coerce(*value, field.kind);
    if (!coerced) {
      return absl::InvalidArgumentError(absl::StrCat("operator ", entry.name, " attribute '",
                                                     field.name, "' must be ",
                                                     AttrKindName(field.kind)));
    }
    if (field.check) {
      std::string problem = field.check(*coerced);
      if (!problem.empty()) {
        return absl::InvalidArgumentError(absl::StrCat("operator ", entry.name, " attribute '",
                                                       field.name, "': ", problem));
      }
    }
    fields.emplace_back(field.name, std::move(*coerced));
  }
  return MakeAttrs(std::move(fields));
}

}  // namespace kiln
