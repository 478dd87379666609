// The builtin converter table.
#include "engine/frontend/onnx/converter_table.h"

#include "engine/support/check.h"

namespace kiln::onnx_frontend {

bool IsDefaultDomain(const std::string& domain) { return domain.empty() || domain == "ai.onnx"; }

std::string QualifiedOpType(const std::string& domain, const std::string& op_type) {
  return IsDefaultDomain(domain) ? op_type : domain + "." + op_type;
}

const ConverterTable& ConverterTable::Builtin() {
  static const ConverterTable* table = [] {
    auto* t = new ConverterTable();
    RegisterElementwiseConverters(*t);
    RegisterNnConverters(*t);
    RegisterReduceConverters(*t);
    RegisterTransformConverters(*t);
    RegisterQuantizeConverters(*t);
    RegisterRecurrentConverters(*t);
    RegisterEinsumConverter(*t);
    RegisterGridSampleConverter(*t);
    RegisterSequenceConverters(*t);
    RegisterTrainingConverters(*t);
    RegisterMaxUnpoolConverter(*t);
    RegisterSpectralConverters(*t);
    RegisterOptionalConverters(*t);
    RegisterTfIdfVectorizerConverter(*t);
    RegisterDetConverter(*t);
    RegisterRoiAlignConverter(*t);
    RegisterNonMaxSuppressionConverter(*t);
    RegisterRandomConverters(*t);
    RegisterStringConverters(*t);
    return t;
  }();
  return *table;
}

void ConverterTable::Add(const std::string& op_type, Converter converter) {
  bool inserted = converters_.emplace(op_type, converter).second;
  KILN_CHECK(inserted) << "ONNX converter for " << op_type << " registered twice";
}

Converter ConverterTable::Find(const std::string& op_type) const {
  auto it = converters_.find(op_type);
  return it == converters_.end() ? nullptr : it->second;
}

std::vector<std::string> ConverterTable::OpTypes() const {
  std::vector<std::string> out;
  for (const auto& [name, fn] : converters_) out.push_back(name);
  return out;
}

}  // namespace kiln::onnx_frontend
