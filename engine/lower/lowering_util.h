// Small helpers lowering shares between the primitive and the module levels:
// how a span is named in error messages, the static tensor leaves of a graph
// type (a tuple contributes one tensor per field, flattened in order), and an
// iterative post-order walk of a function body's dataflow graph.
#pragma once

#include <algorithm>
#include <functional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "engine/ir/expr.h"
#include "engine/ir/span.h"
#include "engine/ir/type.h"
#include "engine/loop/expr.h"

namespace kiln::lower {

// `si=conv1`, `si=[fc, fc/bias]`, or `no span`: the part of an error message
// that says which ONNX layer(s) a node came from.
std::string SpanLabel(const Span& span);

// "nn.conv2d (si=conv1): " -- the prefix of an error about one graph node.
std::string NodePrefix(const std::string& what, const Span& span);

// `status` (not OK) with `prefix` (a NodePrefix) before its message.
absl::Status Prefixed(const std::string& prefix, const absl::Status& status);

struct TensorLeaf {
  DataType dtype;
  std::vector<int64_t> shape;  // -1 for a symbolic dim (allowed only when asked for)
  std::vector<std::string> symbols;  // per dim: its symbol's name, "" for a static dim
  bool is_symbolic() const { return std::find(shape.begin(), shape.end(), -1) != shape.end(); }
};

// The tensors of a value of `type`, tuples flattened depth first. A missing
// type or a function type is an error, and so is a symbolic dimension unless
// `allow_symbolic` (where the caller lowers dimensions known only at run time).
absl::StatusOr<std::vector<TensorLeaf>> TensorLeaves(const Type& type, bool allow_symbolic = false);

// The extents of `leaf`'s dims: constants, and for each symbolic dim the variable of its
// symbol in the open te::SymbolScope (an Unimplemented error when the dim is unnamed or names
// no symbol of the model's inputs).
absl::StatusOr<std::vector<loop::PrimExpr>> LeafDims(const TensorLeaf& leaf);

// How many tensors a value of `type` flattens to (0 for a missing type).
int LeafCount(const Type& type);

// Visits every distinct node of `root`'s dataflow graph once, children first,
// without recursion (a 20,000-call chain costs no stack): call arguments (not
// the callee), tuple fields, the tuple of a TupleGetItem, and a Let's value
// then its body, with `bind_let` called in between so the body may use the
// variable. The first error `visit` returns stops the walk.
absl::Status VisitDataflowPostOrder(const Expr& root,
                                    const std::function<absl::Status(const Expr&)>& visit,
                                    const std::function<void(const LetNode&)>& bind_let);

}  // namespace kiln::lower
