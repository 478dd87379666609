// Constants: rank-0 tensors whose text keeps every bit print inline (`1f`, `3i64`, `True`);
// every other constant prints as `meta[Constant][K]`, with its bytes in the metadata table.
#include <cmath>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "engine/printer/graph/graph_builders.h"
#include "engine/printer/graph/graph_frames.h"
#include "engine/support/check.h"

namespace kiln::printer::graph {

namespace {

template <typename T>
bool SameBits(T a, T b) {
  return std::memcmp(&a, &b, sizeof(T)) == 0;
}

// A NaN reads back as the default quiet NaN with the written sign; other NaNs cannot.
template <typename T>
bool PrintsExactly(T value) {
  if (!std::isnan(value)) return true;
  const T quiet = std::numeric_limits<T>::quiet_NaN();
  return SameBits(value, quiet) || SameBits(value, -quiet);
}

template <typename T>
T Load(const std::string& bytes) {
  T value;
  std::memcpy(&value, bytes.data(), sizeof(T));
  return value;
}

std::shared_ptr<LiteralDocNode> InlineScalar(const TensorDataNode& data) {
  if (!data.shape.empty()) return nullptr;
  if (data.bytes.size() != static_cast<size_t>(DataTypeBytes(data.dtype))) return nullptr;
  std::shared_ptr<LiteralDocNode> literal;
  switch (data.dtype) {
    case DataType::kFloat32: {
      const float value = Load<float>(data.bytes);
      if (!PrintsExactly(value)) return nullptr;
      literal = FloatLiteral(value);
      break;
    }
    case DataType::kFloat64: {
      const double value = Load<double>(data.bytes);
      if (!PrintsExactly(value)) return nullptr;
      literal = FloatLiteral(value);
      break;
    }
    case DataType::kInt32:
      literal = IntLiteral(Load<int32_t>(data.bytes));
      break;
    case DataType::kInt64:
      literal = IntLiteral(Load<int64_t>(data.bytes));
      break;
    case DataType::kBool: {
      const auto byte = static_cast<uint8_t>(data.bytes[0]);
      if (byte > 1) return nullptr;
      literal = BoolLiteral(byte == 1);
      break;
    }
    default:
      return nullptr;
  }
  literal->dtype = data.dtype;
  return literal;
}

std::shared_ptr<IndexDocNode> MetaReference(int index) {
  auto table = std::make_shared<IndexDocNode>(Id("meta"), std::vector<ExprDoc>{Id("Constant")});
  return std::make_shared<IndexDocNode>(std::move(table), std::vector<ExprDoc>{IntLiteral(index)});
}

std::vector<Dim> StaticDims(const std::vector<int64_t>& shape) {
  std::vector<Dim> dims;
  dims.reserve(shape.size());
  for (int64_t extent : shape) dims.push_back(Dim::Static(extent));
  return dims;
}

}  // namespace

Doc BuildConstant(const ObjectRef& node, IRDocsifier& d) {
  const auto* constant = node.as<ConstantNode>();
  std::shared_ptr<ExprDocNode> doc;
  if (constant->data) doc = InlineScalar(*constant->data);
  if (doc == nullptr) {
    GraphModuleFrame* module = d.GetFrame<GraphModuleFrame>();
    KILN_CHECK(module != nullptr) << "constant printed outside a module or fragment";
    doc = MetaReference(module->MetadataIndex(Downcast<ConstantNode>(node)));
  }
  doc->source = node;
  doc->comment = SpanComment(d, constant->span);
  return doc;
}

std::vector<AssignDoc> MetadataEntries(IRDocsifier& d) {
  std::vector<AssignDoc> entries;
  GraphModuleFrame* module = d.GetFrame<GraphModuleFrame>();
  if (module == nullptr) return entries;
  const std::vector<Constant>& table = module->metadata();
  for (size_t k = 0; k < table.size(); ++k) {
    const TensorData& data = table[k]->data;
    ExprDoc value;
    if (data) {
      value = std::make_shared<TensorBytesDocNode>(
          TensorTypeDoc(StaticDims(data->shape), data->dtype), data->bytes);
    } else {
      value = NoneLiteral();
    }
    auto entry = std::make_shared<AssignDocNode>(MetaReference(static_cast<int>(k)),
                                                 std::move(value), nullptr);
    entry->source = table[k];
    entries.push_back(std::move(entry));
  }
  return entries;
}

}  // namespace kiln::printer::graph
