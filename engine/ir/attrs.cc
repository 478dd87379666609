// Attribute values: equality, hashing and small constructors.
#include "engine/ir/attrs.h"

#include <cstring>
#include <functional>

namespace kiln {

bool AttrValue::operator==(const AttrValue& other) const {
  if (value_.index() != other.value_.index()) return false;
  if (is<double>()) {
    // Bitwise, so NaN attributes compare equal to themselves and -0 != +0.
    double a = get<double>(), b = other.get<double>();
    return std::memcmp(&a, &b, sizeof(double)) == 0;
  }
  return value_ == other.value_;
}

AttrValue IntArray(const std::vector<int64_t>& values) {
  AttrValue::Array array;
  array.reserve(values.size());
  for (int64_t v : values) array.emplace_back(v);
  return AttrValue(std::move(array));
}

const AttrValue* AttrsNode::Find(std::string_view key) const {
  for (const Field& field : fields) {
    if (field.first == key) return &field.second;
  }
  return nullptr;
}

bool AttrsEqual(const Attrs& a, const Attrs& b) {
  if (a.same_as(b)) return true;
  size_t na = a ? a->fields.size() : 0;
  size_t nb = b ? b->fields.size() : 0;
  if (na != nb) return false;
  for (size_t i = 0; i < na; ++i) {
    if (a->fields[i].first != b->fields[i].first) return false;
    if (a->fields[i].second != b->fields[i].second) return false;
  }
  return true;
}

size_t AttrValueHash(const AttrValue& value) {
  size_t h = value.storage().index() * 0x9e3779b97f4a7c15ULL;
  auto mix = [&h](size_t v) { h ^= v + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2); };
  if (value.is<int64_t>()) {
    mix(std::hash<int64_t>()(value.get<int64_t>()));
  } else if (value.is<double>()) {
    double d = value.get<double>();
    uint64_t bits;
    std::memcpy(&bits, &d, sizeof(bits));
    mix(std::hash<uint64_t>()(bits));
  } else if (value.is<bool>()) {
    mix(value.get<bool>() ? 1 : 2);
  } else if (value.is<std::string>()) {
    mix(std::hash<std::string>()(value.get<std::string>()));
  } else if (value.is<DataType>()) {
    mix(static_cast<size_t>(value.get<DataType>()));
  } else if (value.is<ShapeValue>()) {
    for (const Dim& dim : value.get<ShapeValue>().dims) {
      mix(std::hash<int64_t>()(dim.value));
      mix(std::hash<std::string>()(dim.symbol));
    }
  } else {
    for (const AttrValue& element : value.get<AttrValue::Array>()) mix(AttrValueHash(element));
  }
  return h;
}

size_t AttrsHash(const Attrs& attrs) {
  size_t h = 0x51ed27;
  if (!attrs) return h;
  for (const auto& [key, value] : attrs->fields) {
    h = h * 1000003 ^ std::hash<std::string>()(key);
    h = h * 1000003 ^ AttrValueHash(value);
  }
  return h;
}

Attrs WithAttr(const Attrs& attrs, std::string key, AttrValue value) {
  std::vector<AttrsNode::Field> fields;
  if (attrs) fields = attrs->fields;
  for (auto& field : fields) {
    if (field.first == key) {
      field.second = std::move(value);
      return MakeAttrs(std::move(fields));
    }
  }
  fields.emplace_back(std::move(key), std::move(value));
  return MakeAttrs(std::move(fields));
}

}  // namespace kiln
