#include "service/artifacts.h"

#include <set>

#include "engine/ir/expr.h"
#include "engine/ir/span.h"
#include "engine/printer/json_printer.h"
#include "engine/printer/printer.h"
#include "nlohmann/json.hpp"
#include "service/compile_request.h"
#include "service/sha256.h"

namespace kiln::service {
namespace {

void AddTensorSignatures(const std::string& name, const Type& type,
                         google::protobuf::RepeatedPtrField<v1::TensorSignature>* out) {
  if (const auto* tuple = type.as<TupleTypeNode>()) {
    for (size_t i = 0; i < tuple->fields.size(); ++i) {
      AddTensorSignatures(absl::StrCat(name, ".", i), tuple->fields[i], out);
    }
    return;
  }
  v1::TensorSignature* signature = out->Add();
  signature->set_name(name);
  if (const auto* tensor = type.as<TensorTypeNode>()) {
    signature->set_dtype(DataTypeName(tensor->dtype));
    for (const Dim& dim : tensor->shape) signature->add_shape(dim.is_static() ? dim.value : -1);
  }
}

const FunctionNode* MainOf(const IRModule& module) {
  if (!module) return nullptr;
  BaseFunc main = module->Lookup("main");
  return main ? main.as<FunctionNode>() : nullptr;
}

nlohmann::ordered_json SignatureJson(const v1::ModelSignature& signature) {
  auto tensors = [](const auto& list) {
    nlohmann::ordered_json out = nlohmann::ordered_json::array();
    for (const v1::TensorSignature& t : list) {
      out.push_back({{"name", t.name()},
                     {"dtype", t.dtype()},
                     {"shape", std::vector<int64_t>(t.shape().begin(), t.shape().end())}});
      if (t.has_bounded()) {
        out.back()["bounded"] = {{"axis", t.bounded().axis()},
                                 {"length_output", t.bounded().length_output()}};
      }
    }
    return out;
  };
  return {{"inputs", tensors(signature.inputs())}, {"outputs", tensors(signature.outputs())}};
}

std::string MetadataJson(const driver::CompileResult& result, const std::string& compile_id) {
  nlohmann::ordered_json json;
  json["format"] = "kiln.compile-metadata";
  json["version"] = 1;
  json["kiln_version"] = KilnVersion();
  json["compile_id"] = compile_id;
  json["signature"] = SignatureJson(ModelSignatureOf(result));
  nlohmann::ordered_json kernels = nlohmann::ordered_json::array();
  if (result.lowered) {
    for (const lower::LoweredKernel& kernel : result.lowered->kernels) {
      kernels.push_back({{"name", kernel.name},
                         {"function", kernel.function_name},
                         {"call_indices", kernel.call_indices},
                         {"spans", SpanSourceNames(kernel.span)}});
    }
    json["workspace_bytes"] = result.lowered->workspace_bytes;
    int64_t constant_bytes = 0;
    for (const auto& [buffer, data] : result.lowered->constants) {
      constant_bytes += static_cast<int64_t>(data->bytes.size());
    }
    json["constants"] = {{"count", result.lowered->constants.size()}, {"bytes", constant_bytes}};
    if (result.lowered->sample_batch) {
      // The object exports <prefix>_run_dynamic (docs/native-code.md), not <prefix>_run.
      json["per_sample"] = {{"batch_dim", result.lowered->sample_batch->symbol},
                            {"entry", "run_dynamic"}};
    }
    if (result.lowered->symbolic) {
      // Compiled over its symbols: <prefix>_run_dynamic too, each dim a number or a symbol.
      const lower::SymbolicSignature& symbolic = *result.lowered->symbolic;
      auto dims = [&](const std::vector<std::vector<int64_t>>& tensors) {
        nlohmann::ordered_json all = nlohmann::ordered_json::array();
        for (const std::vector<int64_t>& tensor : tensors) {
          nlohmann::ordered_json one = nlohmann::ordered_json::array();
          for (int64_t d : tensor) {
            if (d >= 0) {
              one.push_back(d);
            } else {
              one.push_back(symbolic.symbols[-1 - d]);
            }
          }
          all.push_back(std::move(one));
        }
        return all;
      };
      json["symbolic"] = {{"symbols", symbolic.symbols},
                          {"entry", "run_dynamic"},
                          {"input_dims", dims(symbolic.input_dims)},
                          {"output_dims", dims(symbolic.output_dims)}};
    }
  }
  if (result.native) {
    const codegen::NativeModule& native = *result.native;
    json["native"] = {{"triple", native.target.triple},
                      {"cpu", native.target.cpu},
                      {"features", native.target.features},
                      {"symbol_prefix", native.symbol_prefix},
                      {"workspace_bytes", native.workspace_bytes},
                      {"object_bytes", native.object.size()},
                      {"kernel_instructions", native.kernel_instructions},
                      {"kernel_instructions_with_layers", native.kernel_instructions_with_layers}};
  }
  json["kernels"] = std::move(kernels);
  // Names from a model may be any bytes: invalid UTF-8 is replaced, not thrown.
  return json.dump(2, ' ', false, nlohmann::ordered_json::error_handler_t::replace) + "\n";
}

void AddArtifact(v1::ArtifactKind kind, std::string name, std::string content,
                 v1::CompileResponse* response) {
  v1::Artifact* artifact = response->add_artifacts();
  artifact->set_kind(kind);
  artifact->set_name(std::move(name));
  artifact->set_sha256(Sha256Hex(content));
  artifact->set_size(static_cast<int64_t>(content.size()));
  artifact->set_content(std::move(content));
}

}  // namespace

v1::ModelSignature ModelSignatureOf(const driver::CompileResult& result) {
  v1::ModelSignature signature;
  const FunctionNode* main = MainOf(result.optimized);
  if (main == nullptr) return signature;
  for (const Var& param : main->params) {
    Type type = param->checked_type ? param->checked_type : param->type_annotation;
    AddTensorSignatures(param->name_hint, type, signature.mutable_inputs());
  }
  Type ret = main->ret_type ? main->ret_type : main->body->checked_type;
  AddTensorSignatures("output", ret, signature.mutable_outputs());
  // A model compiled per sample: main is one sample's, the batch is known only at run time.
  if (result.lowered && result.lowered->sample_batch) {
    const lower::SampleBatch& batch = *result.lowered->sample_batch;
    auto mark = [](const std::vector<bool>& batched, auto* tensors) {
      if (static_cast<int>(batched.size()) != tensors->size()) return;
      for (int i = 0; i < tensors->size(); ++i) {
        if (batched[static_cast<size_t>(i)] && tensors->Get(i).shape_size() > 0) {
          tensors->Mutable(i)->set_shape(0, -1);
        }
      }
    };
    mark(batch.inputs, signature.mutable_inputs());
    mark(batch.outputs, signature.mutable_outputs());
  }
  if (result.lowered) {
    for (const lower::BoundedOutput& bounded : result.lowered->bounded_outputs) {
      if (bounded.output >= signature.outputs_size()) continue;
      v1::BoundedExtent* extent = signature.mutable_outputs(bounded.output)->mutable_bounded();
      extent->set_axis(bounded.axis);
      extent->set_length_output(bounded.length);
    }
  }
  return signature;
}

absl::Status AddArtifacts(const v1::CompileRequest& request, const driver::CompileResult& result,
                  const std::string& compile_id, v1::CompileResponse* response) {
  std::set<int> wanted(request.artifacts().begin(), request.artifacts().end());
  auto want = [&](v1::ArtifactKind kind) {
    bool native = kind == v1::OBJECT || kind == v1::ASSEMBLY || kind == v1::LLVM_IR ||
                  kind == v1::HEADER || kind == v1::PROVENANCE_JSON || kind == v1::SHARED_LIBRARY;
    return (wanted.empty() && !native) || wanted.count(kind) > 0;
  };
  // Constants print as meta[...] references without the (large) metadata
  // table: the text is for reading and diffing.
  if (want(v1::GRAPH_IR_TEXT)) {
    AddArtifact(v1::GRAPH_IR_TEXT, "model.graph.txt", PrintModule(result.optimized), response);
  }
  if (want(v1::GRAPH_IR_JSON)) {
    AddArtifact(v1::GRAPH_IR_JSON, "model.graph.json", PrintModuleJson(result.optimized), response);
  }
  if (want(v1::LOOP_IR) && result.lowered) {
    PrintOptions script;
    script.format = PrintOptions::Format::kScript;
    AddArtifact(v1::LOOP_IR, "model.loop.py", PrintModule(result.lowered->module, script),
                response);
  }
  if (want(v1::METADATA_JSON)) {
    AddArtifact(v1::METADATA_JSON, "model.metadata.json", MetadataJson(result, compile_id),
                response);
  }
  if (result.native) {
    const codegen::NativeModule& native = *result.native;
    const std::string& prefix = native.symbol_prefix;
    if (want(v1::OBJECT)) AddArtifact(v1::OBJECT, prefix + ".o", native.object, response);
    if (want(v1::ASSEMBLY)) AddArtifact(v1::ASSEMBLY, prefix + ".s", native.assembly, response);
    if (want(v1::LLVM_IR)) AddArtifact(v1::LLVM_IR, prefix + ".ll", native.llvm_ir, response);
    if (want(v1::HEADER)) AddArtifact(v1::HEADER, prefix + ".h", native.header, response);
    if (want(v1::PROVENANCE_JSON)) {
      AddArtifact(v1::PROVENANCE_JSON, prefix + ".provenance.json", native.provenance_json, response);
    }
    if (want(v1::SHARED_LIBRARY)) {
      absl::StatusOr<std::string> library = driver::LinkSharedLibrary(result);
      if (!library.ok()) return library.status();
      AddArtifact(v1::SHARED_LIBRARY, "lib" + prefix + ".so", *library, response);
    }
  }
  return absl::OkStatus();
}

}  // namespace kiln::service
