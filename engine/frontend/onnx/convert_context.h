// ConvertContext: what an op converter sees while converting one ONNX node:
// its inputs as typed expressions, its attributes, the opset, and builders
// that type each new call at once and give it the node's span. Converters
// never touch spans themselves: everything built through the context carries
// the node's source name, down to (not past) the node's inputs.
#pragma once

#include <onnx/onnx_pb.h>

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "engine/ir/expr.h"
#include "engine/frontend/onnx/importer.h"

namespace kiln::onnx_frontend {

class ConvertContext {
 public:
  ConvertContext(const onnx::NodeProto& node, int node_index, int64_t opset, Span span,
                 std::vector<Expr> inputs, const OnnxImportOptions& options)
      : node_(node),
        node_index_(node_index),
        opset_(opset),
        span_(std::move(span)),
        inputs_(std::move(inputs)),
        options_(options) {}

  const onnx::NodeProto& node() const { return node_; }
  int64_t opset() const { return opset_; }
  const Span& span() const { return span_; }
  const OnnxImportOptions& options() const { return options_; }

  // Inputs. An optional input left out (`""` or past the end) is absent.
  size_t num_inputs() const { return inputs_.size(); }
  bool HasInput(size_t i) const { return i < inputs_.size() && inputs_[i].defined(); }
  // The input, or an error naming it when absent.
  absl::StatusOr<Expr> Input(size_t i) const;
  // The input's tensor type, or an error when absent or not a tensor.
  absl::StatusOr<const TensorTypeNode*> InputTensorType(size_t i) const;
  // The input's value when it is a constant (initializer or folded), else null.
  TensorData ConstantInput(size_t i) const;
  // A constant input read as int64 values (int32/int64 accepted), or an error
  // saying that input `what` must be constant.
  absl::StatusOr<std::vector<int64_t>> ConstantInts(size_t i, const char* what) const;

  // The static shape the graph declares for output `i` of this node (graph outputs and
  // value_info), or nullopt: what may be compiled in when the operand deciding that shape is known
  // only at run time (shape_guards.h checks it then). Only nodes of the main graph see them.
  std::optional<std::vector<int64_t>> DeclaredOutputShape(size_t i) const;
  void set_declared_shapes(const std::map<std::string, std::vector<int64_t>>* shapes) {
    declared_shapes_ = shapes;
  }

  // A data-dependent output (NonZero's, Compress's, Unique's, NonMaxSuppression's) whose model
  // declares no static shape is compiled at its static upper bound along `axis`, `length` (an
  // int64 scalar) holding how many entries along it a run fills: a bounded output
  // (`docs/onnx-frontend.md`). Only nodes of the main graph may give one; the importer checks
  // where it flows.
  struct BoundedOutput {
    size_t output;
    int64_t axis;
    Expr length;
  };
  bool CanBoundOutputs() const { return declared_shapes_ != nullptr; }
  void MarkBounded(size_t output, int64_t axis, Expr length) {
    bounded_.push_back({output, axis, std::move(length)});
  }
  const std::vector<BoundedOutput>& bounded_outputs() const { return bounded_; }

  // Attributes.
  bool HasAttr(const std::string& name) const { return FindAttr(name) != nullptr; }
  const onnx::AttributeProto* FindAttr(const std::string& name) const;
  absl::StatusOr<int64_t> IntAttr(const std::string& name, std::optional<int64_t> fallback) const;
  // Float attributes are float32 in ONNX; the value comes back as the double
  // of its shortest decimal form (1e-05, not 9.999999747378752e-06), which
  // prints as written in the model and narrows back to the same float.
  absl::StatusOr<double> FloatAttr(const std::string& name, std::optional<float> fallback) const;
  absl::StatusOr<std::string> StringAttr(const std::string& name,
                                         std::optional<std::string> fallback) const;
  absl::StatusOr<std::vector<int64_t>> IntsAttr(const std::string& name,
                                                std::optional<std::vector<int64_t>> fallback) const;
  absl::StatusOr<std::vector<float>> FloatsAttr(const std::string& name,
                                                std::optional<std::vector<float>> fallback) const;
  absl::StatusOr<TensorData> TensorAttr(const std::string& name) const;

  // Builders: typed at once (errors name this node), spans attached.
  absl::StatusOr<Expr> Call(const std::string& op, std::vector<Expr> args, Attrs attrs = nullptr);
  // An error naming this node unless `op` may take (and give) string tensors.
  absl::Status CheckStringUse(const std::string& op, const std::vector<Type>& arg_types,
                              const Type& result) const;
  Expr Constant(TensorData data);
  absl::StatusOr<Expr> TupleGetItem(const Expr& tuple, int index);
  absl::StatusOr<Expr> Tuple(std::vector<Expr> fields);
  // if (cond) then_value else else_value: cond a bool scalar, the branches of one type.
  absl::StatusOr<Expr> If(const Expr& cond, const Expr& then_value, const Expr& else_value);

  // Charges `bytes` of `tensor` (what this node is about to materialize) to
  // the compile's budget; over it, ResourceExhausted naming this node.
  absl::Status ChargeBytes(int64_t bytes, std::string_view tensor) const;

  // An InvalidArgument error naming this node: `ONNX node 'conv1' (#3, Conv): <message>`.
  absl::Status Error(absl::string_view message) const;
  std::string Describe() const;

 private:
  const onnx::NodeProto& node_;
  int node_index_;
  int64_t opset_;
  Span span_;
  std::vector<Expr> inputs_;
  const OnnxImportOptions& options_;
  const std::map<std::string, std::vector<int64_t>>* declared_shapes_ = nullptr;
  std::vector<BoundedOutput> bounded_;
};

// Reads a TensorProto (typed fields or raw_data), validating dtype, dims and
// data length against each other and the element limit before allocating.
absl::StatusOr<TensorData> TensorFromProto(const onnx::TensorProto& proto,
                                           int64_t max_elements,
                                           CompileBudget* budget = nullptr);
// The same, but moves raw_data out of `proto` instead of copying it: the
// importer owns its parsed model, and weights are most of a model's bytes.
absl::StatusOr<TensorData> TakeTensorFromProto(onnx::TensorProto* proto, int64_t max_elements,
                                               CompileBudget* budget = nullptr);
// ONNX TensorProto.DataType -> Kiln dtype, or an error naming the type.
absl::StatusOr<DataType> DataTypeFromOnnx(int32_t onnx_type);

// One converter per ONNX op type; returns the node's outputs in order.
using Converter = absl::StatusOr<std::vector<Expr>> (*)(ConvertContext& ctx);

}  // namespace kiln::onnx_frontend
