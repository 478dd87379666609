// Attributes of calls, functions and modules: an ordered list of typed values.
// A value is an int, float, bool, string, dtype, shape, or an array of values;
// the text form is self-describing (see docs/graph-text-format.md) so
// attributes print and parse back with their types intact. Per-op schemas
// (which keys, which types, defaults) live in the operator registry.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

#include "engine/ir/dtype.h"
#include "engine/ir/object.h"
#include "engine/ir/type.h"

namespace kiln {

struct ShapeValue {
  std::vector<Dim> dims;
  bool operator==(const ShapeValue& other) const { return dims == other.dims; }
};

class AttrValue {
 public:
  using Array = std::vector<AttrValue>;
  using Storage =
      std::variant<int64_t, double, bool, std::string, DataType, ShapeValue, Array>;

  AttrValue() : value_(int64_t{0}) {}
  AttrValue(int64_t v) : value_(v) {}              // NOLINT(google-explicit-constructor)
  AttrValue(int v) : value_(int64_t{v}) {}         // NOLINT(google-explicit-constructor)
  AttrValue(double v) : value_(v) {}               // NOLINT(google-explicit-constructor)
  AttrValue(bool v) : value_(v) {}                 // NOLINT(google-explicit-constructor)
  AttrValue(std::string v) : value_(std::move(v)) {}  // NOLINT(google-explicit-constructor)
  AttrValue(const char* v) : value_(std::string(v)) {}  // NOLINT(google-explicit-constructor)
  AttrValue(DataType v) : value_(v) {}             // NOLINT(google-explicit-constructor)
  AttrValue(ShapeValue v) : value_(std::move(v)) {}  // NOLINT(google-explicit-constructor)
  AttrValue(Array v) : value_(std::move(v)) {}     // NOLINT(google-explicit-constructor)

  template <typename T>
  bool is() const {
    return std::holds_alternative<T>(value_);
  }
  template <typename T>
  const T& get() const {
    return std::get<T>(value_);
  }
  const Storage& storage() const { return value_; }

  bool operator==(const AttrValue& other) const;
  bool operator!=(const AttrValue& other) const { return !(*this == other); }

 private:
  Storage value_;
};

// Convenience: an array of ints.
AttrValue IntArray(const std::vector<int64_t>& values);

class AttrsNode final : public Object {
 public:
  static constexpr bool IsKind(ObjectKind k) { return k == ObjectKind::kAttrs; }
  using Field = std::pair<std::string, AttrValue>;
  explicit AttrsNode(std::vector<Field> fields)
      : Object(ObjectKind::kAttrs), fields(std::move(fields)) {}

  const AttrValue* Find(std::string_view key) const;

  // Keys are unique; order is the schema's (or the order written).
  const std::vector<Field> fields;
};
using Attrs = Ref<AttrsNode>;

inline Attrs MakeAttrs(std::vector<AttrsNode::Field> fields) {
  return MakeRef<AttrsNode>(std::move(fields));
}

// Null and empty attribute lists are equal.
bool AttrsEqual(const Attrs& a, const Attrs& b);
size_t AttrValueHash(const AttrValue& value);
size_t AttrsHash(const Attrs& attrs);

// Returns `attrs` with `key` set to `value` (replaced in place or appended).
Attrs WithAttr(const Attrs& attrs, std::string key, AttrValue value);

}  // namespace kiln
