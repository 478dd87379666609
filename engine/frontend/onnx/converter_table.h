// The table of ONNX op converters, filled by one explicit call per op family
// (each family in its own *_converters.cc).
#pragma once

#include <map>
#include <string>
#include <vector>

#include "engine/frontend/onnx/convert_context.h"

namespace kiln::onnx_frontend {

class ConverterTable {
 public:
  // The table with every builtin converter (built on first use).
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

}  // namespace kiln::onnx_frontend
