// The operator registry: one entry per graph operator, holding everything
// that gives an Op handle its meaning: a typed attribute schema (with
// defaults and validation), the type relation, the fusion pattern, flags, and
// (from the schedules issue on) the compute definition. Every op is defined
// exactly once, in the file of its family (elementwise.cc, nn.cc, ...).
//
// Registration is one explicit call, RegisterBuiltinOps(), never a static
// initializer: the linker cannot drop an op and the order is deterministic.
//
// Passes tell ops apart by identity, never by name. Op handles are interned
// (GetOp: one OpNode per name) and each entry holds its op's handle, so
// IsOp(call->op, entry) is a pointer comparison. A pass looks up the entries
// it matches once (OpRegistry::Get into a function-local static) and, where it
// asks about a class of ops, reads a property of the entry instead
// (scale_axis; FindCallee gives a callee's entry).
#pragma once

#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
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

// How FoldScaleAxis moves a per-channel scale across a call of the op: into a
// layer's weight, through a link of the chain above a layer, or (for the
// positivity of a scale) through an op that only rearranges values.
enum class ScaleAxisRule {
  kNone,          // a scale stops here
  kConvLayer,     // nn.conv1d/2d/3d: channels on axis 1 of data and result; weight O, I, ...
  kDenseLayer,    // nn.dense: channels last; weight (N, K)
  kMatmulLayer,   // nn.matmul: channels last; weight axes by transpose_b
  kChannelwise,   // nn.relu, add, nn.bias_add: a backward fold passes through to the layer
  kRearrange,     // reshape, expand_dims, squeeze: moves values, keeps their signs
};

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
  // The compute definition is written over te::Tensor::dims(), so it may be given tensors with
  // symbolic dimensions (SetSymbolicCompute); others are only given static tensors.
  bool symbolic_compute = false;
  ScaleAxisRule scale_axis = ScaleAxisRule::kNone;
  // This op's handle, GetOp(name), set by OpRegistry::Register.
  Op op;

  const AttrField* FindAttr(std::string_view key) const;
};

// True when `callee` (a call's op) is the op of `entry`: handles are
// interned, so this compares pointers, never names.
inline bool IsOp(const Expr& callee, const OpEntry& entry) {
  return callee.defined() && callee.same_as(entry.op);
}
// The call when `expr` is a call of the op of `entry`, else null.
inline const CallNode* AsCallOf(const Expr& expr, const OpEntry& entry) {
  const auto* call = expr.as<CallNode>();
  return call != nullptr && IsOp(call->op, entry) ? call : nullptr;
}

class OpRegistry {
 public:
  OpRegistry() = default;
  // Not copyable: the handle index points into `entries_`.
  OpRegistry(const OpRegistry&) = delete;
  OpRegistry& operator=(const OpRegistry&) = delete;

  // The process-wide registry with every builtin op (registered on first use).
  static const OpRegistry& Global();

  // Adds `entry` and sets its handle; a second entry of the same name is a
  // Kiln bug (CHECK).
  OpEntry& Register(OpEntry entry);
  const OpEntry* Find(std::string_view name) const;
  // The entry of registered op `name`; any other name is a Kiln bug (CHECK).
  // Passes look up the ops they match once, e.g.
  //   static const OpEntry& add = OpRegistry::Global().Get("add");
  const OpEntry& Get(std::string_view name) const;
  // The entry whose handle `callee` is (a pointer lookup), or null when
  // `callee` is not a registered op's handle (a function, a variable, ...).
  const OpEntry* FindCallee(const Expr& callee) const;
  // Attaches the compute definition of an already registered op (CHECK).
  void SetCompute(std::string_view name, ComputeDefinition compute);
  // SetCompute of a definition that handles symbolic dimensions (OpEntry::symbolic_compute).
  void SetSymbolicCompute(std::string_view name, ComputeDefinition compute);
  // In name order (deterministic listings).
  std::vector<const OpEntry*> List() const;

 private:
  std::map<std::string, OpEntry, std::less<>> entries_;
  std::unordered_map<const ExprNode*, const OpEntry*> by_handle_;
};

void RegisterBuiltinOps(OpRegistry& registry);

// Validates `given` against the schema of `entry`: unknown keys, wrong kinds
// and failed checks are errors naming the op and the key; missing optional
// keys get their defaults. The result lists fields in schema order. Ints are
// accepted for float fields.
absl::StatusOr<Attrs> NormalizeAttrs(const OpEntry& entry, const Attrs& given);

}  // namespace kiln
