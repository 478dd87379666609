// The operator registry: one entry per graph operator, holding everything
// that gives an Op handle its meaning: a typed attribute schema (with
// defaults and validation), the type relation, the fusion pattern, flags, and
// (from the schedules issue on) the compute definition. Every op is defined
// exactly once, in the file of its family (elementwise.cc, nn.cc, ...).
//
// Registration is one explicit call, RegisterBuiltinOps(), never a static
// initializer: the linker cannot drop an op and the order is deterministic.
#pragma once

#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "engine/ir/attrs.h"
#include "engine/ir/expr.h"
#include "engine/te/tensor.h"

namespace kiln {

// How an op may fuse with its neighbours (the seeds' OpPatternKind). Lower
// values fuse more freely.
enum class OpPattern {
  kElementwise = 0,       // out[i] = f(in[i])
  kBroadcast = 1,         // elementwise with numpy broadcasting
  kInjective = 2,         // each output element reads a computable set of inputs
  kReduction = 3,         // reduces along axes
  kOutElementwiseFusable = 4,  // conv2d, dense: elementwise ops may fuse into the output
  kTuple = 7,             // makes or takes tuples
  kOpaque = 8,            // never fused
};
const char* OpPatternName(OpPattern pattern);

// The kind of value an attribute holds; the schema's check on every call.
enum class AttrKind { kInt, kFloat, kBool, kString, kDataType, kShape, kIntArray, kFloatArray,
                      kAny };
const char* AttrKindName(AttrKind kind);

struct AttrField {
  std::string name;
  AttrKind kind;
  // Absent: the attribute is required.
  std::optional<AttrValue> default_value;
  std::string doc;
  // Extra validation (ranges, allowed strings); returns an error message or "".
  std::function<std::string(const AttrValue&)> check;
};

// Everything the type relation of one call sees.
struct TypeRelationInput {
  const std::vector<Type>& args;  // checked types of the arguments, never null
  const AttrsNode& attrs;         // normalized: every schema field present
};

// Returns the call's result type, or an InvalidArgument error saying what was
// expected ("expected rank 4 input, got rank 3"); the caller adds which node.
using TypeRelation = std::function<absl::StatusOr<Type>(const TypeRelationInput&)>;

// Everything an op's compute definition sees: tensors for the arguments (a
// tuple-typed argument contributes one tensor per field, in order), the
// normalized attributes, and the call's checked result type.
struct ComputeInput {
  const std::vector<te::Tensor>& inputs;
  const AttrsNode& attrs;
  const Type& result_type;
};

// The op's semantics as tensor expressions: one tensor per result (one per
// tuple field for tuple results). Unsupported cases are an Unimplemented or
// InvalidArgument error saying what is not supported.
using ComputeDefinition =
    std::function<absl::StatusOr<std::vector<te::Tensor>>(const ComputeInput&)>;

struct OpEntry {
  std::string name;
  std::string summary;
  int min_args = 1;
  int max_args = 1;  // -1: variadic
  std::vector<AttrField> attrs;
  TypeRelation relation;
  OpPattern pattern = OpPattern::kOpaque;
  bool stateful = false;           // results may differ between calls (random ops)
  bool non_computational = false;  // only moves metadata (reshape of a view, ...)
  // Defined once (engine/op/compute/) and used by FoldConstant, the
  // interpreter and code generation alike. Null only for ops with no data
  // semantics of their own (device annotations).
  ComputeDefinition compute;

  const AttrField* FindAttr(std::string_view key) const;
};

class OpRegistry {
 public:
  // The process-wide registry with every builtin op (registered on first use).
  static const OpRegistry& Global();

  // Adds `entry`; a second entry of the same name is a Kiln bug (CHECK).
  OpEntry& Register(OpEntry entry);
  const OpEntry* Find(std::string_view name) const;
  // Attaches the compute definition of an already registered op (CHECK).
  void SetCompute(std::string_view name, ComputeDefinition compute);
  // In name order (deterministic listings).
  std::vector<const OpEntry*> List() const;

 private:
  std::map<std::string, OpEntry, std::less<>> entries_;
};

void RegisterBuiltinOps(OpRegistry& registry);

// Validates `given` against the schema of `entry`: unknown keys, wrong kinds
// and failed checks are errors naming the op and the key; missing optional
// keys get their defaults. The result lists fields in schema order. Ints are
// accepted for float fields.
absl::StatusOr<Attrs> NormalizeAttrs(const OpEntry& entry, const Attrs& given);

}  // namespace kiln
