#include "service/compile_request.h"

#include <algorithm>
#include <string>

#include "absl/strings/str_cat.h"
#include "google/protobuf/io/coded_stream.h"
#include "google/protobuf/io/zero_copy_stream_impl_lite.h"
#include "service/sha256.h"
#include "service/source_fingerprint.h"

namespace kiln::service {

const char* KilnVersion() {
  // The release, then the build's source fingerprint (its first 12 hex digits, as git abbreviates
  // a commit): responses, metrics and compile ids name the code that made the artifacts.
  static const std::string version =
      std::string(KilnRelease()) + "+" + std::string(SourceFingerprint(), 12);
  return version.c_str();
}

std::string CompileId(const v1::CompileRequest& request) {
  // The model is hashed on its own (it is most of the request: copying it
  // into a canonical request would double the memory of a large model).
  // Everything else that changes the compile (not its name, not which
  // artifacts to return) is in `canonical`.
  v1::CompileRequest canonical;
  *canonical.mutable_target() = request.target();
  // An empty target means this host's: the id names the machine code it stands for, so replicas
  // on different CPUs never share an id for different objects.
  absl::StatusOr<codegen::ResolvedTarget> resolved =
      codegen::ResolveTarget(CodegenTargetOf(request.target()));
  if (resolved.ok()) {
    canonical.mutable_target()->set_triple(resolved->triple);
    canonical.mutable_target()->set_cpu(resolved->cpu);
    canonical.mutable_target()->set_features(resolved->features);
  }
  *canonical.mutable_pass_options() = request.pass_options();
  canonical.set_fast_math(request.fast_math());
  *canonical.mutable_input_shapes() = request.input_shapes();
  *canonical.mutable_sequence_input_shapes() = request.sequence_input_shapes();
  // A set: the order it was written in does not change the compile.
  std::vector<std::string> empty(request.empty_optional_inputs().begin(),
                                 request.empty_optional_inputs().end());
  std::sort(empty.begin(), empty.end());
  empty.erase(std::unique(empty.begin(), empty.end()), empty.end());
  for (const std::string& name : empty) canonical.add_empty_optional_inputs(name);
  // Deterministic serialization orders map entries (the config map), so equal
  // requests give equal bytes.
  std::string options;
  {
    google::protobuf::io::StringOutputStream stream(&options);
    google::protobuf::io::CodedOutputStream coded(&stream);
    coded.SetSerializationDeterministic(true);
    canonical.SerializeToCodedStream(&coded);
  }
  const bool onnx = request.model_case() == v1::CompileRequest::kOnnx;
  const std::string& model = onnx ? request.onnx() : request.graph_ir_text();
  return Sha256Hex(absl::StrCat("kiln ", KilnVersion(), "\n", onnx ? "onnx " : "graph-ir ",
                                Sha256Hex(model), "\n", options));
}

codegen::TargetOptions CodegenTargetOf(const v1::Target& target) {
  return codegen::TargetOptions{target.triple(), target.cpu(), target.features()};
}

absl::StatusOr<driver::CompileOptions> ToCompileOptions(const v1::CompileRequest& request) {
  driver::CompileOptions options;
  // Every compile generates native code (the cached result serves every artifact kind).
  codegen::CodegenOptions codegen;
  codegen.target = CodegenTargetOf(request.target());
  codegen.emit_assembly = true;
  codegen.emit_llvm_ir = true;
  codegen.fast_math = request.fast_math();
  if (request.target().has_weight_prefetch_footprint_bytes()) {
    codegen.weight_prefetch_footprint_bytes = request.target().weight_prefetch_footprint_bytes();
  }
  options.codegen = codegen;
  const v1::PassOptions& pass = request.pass_options();
  if (pass.has_opt_level()) {
    if (pass.opt_level() < 0 || pass.opt_level() > 3) {
      return absl::InvalidArgumentError(absl::StrCat(
          "pass_options.opt_level is ", pass.opt_level(), "; expected 0, 1, 2 or 3"));
    }
    options.opt_level = pass.opt_level();
  }
  options.pipeline = pass.pipeline();
  options.required_passes.assign(pass.required_passes().begin(), pass.required_passes().end());
  options.disabled_passes.assign(pass.disabled_passes().begin(), pass.disabled_passes().end());
  // Sorted by key, so the PassContext sees the same order for equal requests.
  std::map<std::string, std::string> config(pass.config().begin(), pass.config().end());
  for (const auto& [key, value] : config) options.config.push_back(absl::StrCat(key, "=", value));
  if (pass.has_enable_si_builder()) {
    options.config.push_back(
        absl::StrCat("ir.enable_si_builder=", pass.enable_si_builder() ? "true" : "false"));
  }
  if (pass.has_fill_spans()) options.import.span_filling = pass.fill_spans();
  for (const v1::InputShape& shape : request.input_shapes()) {
    if (shape.name().empty()) {
      return absl::InvalidArgumentError("input_shapes: an entry has no name");
    }
    for (int64_t dim : shape.dims()) {
      if (dim < 0) {
        return absl::InvalidArgumentError(absl::StrCat("input_shapes['", shape.name(),
                                                       "'] has dimension ", dim,
                                                       "; expected sizes >= 0"));
      }
    }
    options.import.input_shapes[shape.name()] =
        std::vector<int64_t>(shape.dims().begin(), shape.dims().end());
  }
  // Each element becomes a parameter of the compiled model: bounded like its graph's inputs.
  int64_t elements = 0;
  for (const v1::SequenceInputShape& sequence : request.sequence_input_shapes()) {
    if (sequence.name().empty()) {
      return absl::InvalidArgumentError("sequence_input_shapes: an entry has no name");
    }
    elements += sequence.elements_size();
    if (elements > kMaxSequenceInputElements) {
      return absl::InvalidArgumentError(absl::StrCat(
          "sequence_input_shapes: more than ", kMaxSequenceInputElements, " elements in all"));
    }
    std::vector<std::vector<int64_t>>& shapes = options.import.input_sequence_shapes[sequence.name()];
    for (const v1::InputShape& element : sequence.elements()) {
      for (int64_t dim : element.dims()) {
        if (dim < 0) {
          return absl::InvalidArgumentError(absl::StrCat(
              "sequence_input_shapes['", sequence.name(), "'] element ", shapes.size(),
              " has dimension ", dim, "; expected sizes >= 0"));
        }
      }
      shapes.emplace_back(element.dims().begin(), element.dims().end());
    }
  }
  for (const std::string& name : request.empty_optional_inputs()) {
    if (name.empty()) return absl::InvalidArgumentError("empty_optional_inputs: an empty name");
    options.import.empty_optional_inputs.insert(name);
  }
  return options;
}

absl::StatusOr<driver::CompileResult> RunCompile(const v1::CompileRequest& request,
                                                 const driver::CompileOptions& options) {
  switch (request.model_case()) {
    case v1::CompileRequest::kOnnx:
      return driver::CompileOnnx(request.onnx(), options);
    case v1::CompileRequest::kGraphIrText:
      return driver::CompileGraphText(request.graph_ir_text(), options);
    case v1::CompileRequest::MODEL_NOT_SET:
      break;
  }
  return absl::InvalidArgumentError("the request has no model: set onnx or graph_ir_text");
}

}  // namespace kiln::service
