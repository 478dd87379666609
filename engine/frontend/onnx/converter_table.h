// The table of ONNX op converters, filled by one explicit call per op family
// (each family in its own *_converters.cc).
#pragma once

#include <map>
#include <string>
#include <vector>

#include "engine/frontend/onnx/convert_context.h"

namespace kiln::onnx_frontend {

// The domain of ONNX's training operators (Adagrad, Adam, Momentum, Gradient).
inline constexpr char kTrainingDomain[] = "ai.onnx.preview.training";

// True for the default ONNX domain ("" or "ai.onnx").
bool IsDefaultDomain(const std::string& domain);

// The table key of an op: its type in the default domain, `domain.op_type` in any other.
std::string QualifiedOpType(const std::string& domain, const std::string& op_type);

class ConverterTable {
 public:
  // The table with every builtin converter (built on first use), keyed by QualifiedOpType.
  static const ConverterTable& Builtin();

  void Add(const std::string& op_type, Converter converter);
  Converter Find(const std::string& op_type) const;
  std::vector<std::string> OpTypes() const;

 private:
  std::map<std::string, Converter> converters_;
};

void RegisterElementwiseConverters(ConverterTable& table);  // elementwise_converters.cc
void RegisterNnConverters(ConverterTable& table);           // nn_converters.cc
void RegisterReduceConverters(ConverterTable& table);       // reduce_converters.cc
void RegisterTransformConverters(ConverterTable& table);    // transform_converters.cc
void RegisterQuantizeConverters(ConverterTable& table);     // quantize_converters.cc
void RegisterRecurrentConverters(ConverterTable& table);    // recurrent_converters.cc
void RegisterEinsumConverter(ConverterTable& table);        // einsum_converter.cc
void RegisterGridSampleConverter(ConverterTable& table);    // grid_sample_converter.cc
void RegisterSequenceConverters(ConverterTable& table);     // sequence_converters.cc
void RegisterTrainingConverters(ConverterTable& table);     // training_converters.cc
void RegisterMaxUnpoolConverter(ConverterTable& table);     // max_unpool_converter.cc
void RegisterSpectralConverters(ConverterTable& table);     // spectral_converters.cc
void RegisterOptionalConverters(ConverterTable& table);     // optional_converters.cc
void RegisterTfIdfVectorizerConverter(ConverterTable& table);  // tfidf_vectorizer_converter.cc
void RegisterDetConverter(ConverterTable& table);           // det_converter.cc
void RegisterRoiAlignConverter(ConverterTable& table);      // roi_align_converter.cc
void RegisterNonMaxSuppressionConverter(ConverterTable& table);  // non_max_suppression_converter.cc
void RegisterRandomConverters(ConverterTable& table);          // random_values.cc
void RegisterStringConverters(ConverterTable& table);          // string_converters.cc

}  // namespace kiln::onnx_frontend
