// TfIdfVectorizer on integer input as graph ops. The pool's n-grams (attributes, so static) are
// matched against every window of the input: for an n-gram (g0, ..., gn-1) and a skip distance
// d, the window at k matches when x[k + j d] == gj for every j, which is n equal-compares of
// shifted slices of x and-ed together; the matches summed along the last axis are that n-gram's
// count. As the ONNX operator counts them, unigrams count once (d = 1) and longer n-grams once
// per d in 1 ..= max_skip_count + 1; n-grams sharing an output index add up. The counts become
// TF, IDF (the weight where the count is positive) or TF-IDF (count times weight), float32.
#include <algorithm>
#include <map>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "engine/frontend/onnx/converter_table.h"
#include "engine/frontend/onnx/convert_context.h"
#include "engine/frontend/onnx/scalar_tensors.h"
#include "engine/support/status_macros.h"

namespace kiln::onnx_frontend {
namespace {

// The most item compares (n per n-gram and skip distance) one node may ask for: each is a few
// graph ops.
constexpr int64_t kMaxMatches = 1 << 14;

struct Ngram {
  std::vector<int64_t> items;
  int64_t output_index = 0;
};

absl::StatusOr<std::vector<Expr>> ConvertTfIdfVectorizer(ConvertContext& ctx) {
  KILN_ASSIGN_OR_RETURN(Expr x, ctx.Input(0));
  KILN_ASSIGN_OR_RETURN(const TensorTypeNode* tx, ctx.InputTensorType(0));
  if (tx->dtype != DataType::kInt32 && tx->dtype != DataType::kInt64) {
    return ctx.Error(absl::StrCat("input 0 must be int32 or int64 (string input is not supported), got ",
                                  DataTypeName(tx->dtype)));
  }
  const int64_t rank = static_cast<int64_t>(tx->shape.size());
  if (rank != 1 && rank != 2) return ctx.Error("input 0 must be [C] or [B, C]");
  for (const Dim& d : tx->shape) {
    if (!d.is_static()) return ctx.Error("input 0 must have a static shape");
  }
  const int64_t length = tx->shape.back().value;
  KILN_ASSIGN_OR_RETURN(int64_t min_gram, ctx.IntAttr("min_gram_length", std::nullopt));
  KILN_ASSIGN_OR_RETURN(int64_t max_gram, ctx.IntAttr("max_gram_length", std::nullopt));
  KILN_ASSIGN_OR_RETURN(int64_t max_skip, ctx.IntAttr("max_skip_count", std::nullopt));
  KILN_ASSIGN_OR_RETURN(std::string mode, ctx.StringAttr("mode", std::nullopt));
  KILN_ASSIGN_OR_RETURN(std::vector<int64_t> counts, ctx.IntsAttr("ngram_counts", std::nullopt));
  KILN_ASSIGN_OR_RETURN(std::vector<int64_t> indexes, ctx.IntsAttr("ngram_indexes", std::nullopt));
  KILN_ASSIGN_OR_RETURN(std::vector<int64_t> pool, ctx.IntsAttr("pool_int64s", std::vector<int64_t>{}));
  KILN_ASSIGN_OR_RETURN(std::vector<float> weights, ctx.FloatsAttr("weights", std::vector<float>{}));
  if (ctx.HasAttr("pool_strings")) return ctx.Error("pool_strings (string n-grams) is not supported");
  if (mode != "TF" && mode != "IDF" && mode != "TFIDF") {
    return ctx.Error(absl::StrCat("attribute 'mode' is '", mode, "'; expected TF, IDF or TFIDF"));
  }
  if (min_gram < 1 || max_gram < min_gram || max_skip < 0) {
    return ctx.Error(absl::StrCat("expected 1 <= min_gram_length (", min_gram, ") <= max_gram_length (",
                                  max_gram, ") and max_skip_count (", max_skip, ") >= 0"));
  }
  max_skip = std::min(max_skip, length);  // a longer skip finds no window anyway
  int64_t output_size = 0;
  for (int64_t index : indexes) {
    if (index < 0 || index >= kMaxMatches) {
      return ctx.Error(absl::StrCat("ngram_indexes holds ", index, "; expected [0, ", kMaxMatches, ")"));
    }
    output_size = std::max(output_size, index + 1);
  }
  if (!weights.empty() && static_cast<int64_t>(weights.size()) != output_size) {
    return ctx.Error(absl::StrCat("weights has ", weights.size(), " values for ", output_size,
                                  " outputs"));
  }

  // The pool's n-grams of the loaded sizes, numbered across all sizes as ngram_indexes counts.
  std::vector<Ngram> ngrams;
  int64_t id = 0;
  for (size_t level = 0; level < counts.size(); ++level) {
    const int64_t n = static_cast<int64_t>(level) + 1;
    const int64_t begin = counts[level];
    const int64_t end = level + 1 < counts.size() ? counts[level + 1] : static_cast<int64_t>(pool.size());
    if (begin < 0 || end < begin || end > static_cast<int64_t>(pool.size()) || (end - begin) % n != 0) {
      return ctx.Error(absl::StrCat("ngram_counts entry ", level, " (", begin, " to ", end,
                                    ") is not a whole number of ", n, "-grams of the pool of ",
                                    pool.size()));
    }
    for (int64_t start = begin; start < end; start += n, ++id) {
      if (id >= static_cast<int64_t>(indexes.size())) {
        return ctx.Error(absl::StrCat("ngram_indexes has ", indexes.size(), " entries for more n-grams"));
      }
      if (n < min_gram || n > max_gram) continue;
      ngrams.push_back({std::vector<int64_t>(pool.begin() + start, pool.begin() + start + n),
                        indexes[static_cast<size_t>(id)]});
    }
  }

  // count[o]: the summed matches of the n-grams of output index o, each [B] or a scalar.
  std::map<int64_t, Expr> count;
  int64_t matches = 0;
  for (const Ngram& gram : ngrams) {
    const int64_t n = static_cast<int64_t>(gram.items.size());
    for (int64_t d = 1; d <= (n == 1 ? 1 : max_skip + 1); ++d) {
      const int64_t windows = length - (n - 1) * d;
      if (windows <= 0) break;
      matches += n;  // n compares per (n-gram, skip distance)
      if (matches > kMaxMatches) {
        return ctx.Error(absl::StrCat("the pool asks for more than ", kMaxMatches,
                                      " item compares over its (n-gram, skip) matches"));
      }
      Expr match;
      for (int64_t j = 0; j < n; ++j) {
        KILN_ASSIGN_OR_RETURN(
            Expr slice, ctx.Call("strided_slice", {x},
                                 MakeAttrs({{"begin", IntArray({j * d})}, {"end", IntArray({j * d + windows})},
                                            {"strides", IntArray({1})}, {"axes", IntArray({rank - 1})}})));
        KILN_ASSIGN_OR_RETURN(
            Expr equal, ctx.Call("equal", {slice, ctx.Constant(ScalarTensor(tx->dtype, static_cast<double>(gram.items[j])))}));
        if (match.defined()) {
          KILN_ASSIGN_OR_RETURN(match, ctx.Call("logical_and", {match, equal}));
        } else {
          match = equal;
        }
      }
      KILN_ASSIGN_OR_RETURN(Expr ones, ctx.Call("cast", {match}, MakeAttrs({{"dtype", DataType::kFloat32}})));
      KILN_ASSIGN_OR_RETURN(Expr found, ctx.Call("sum", {ones}, MakeAttrs({{"axis", IntArray({rank - 1})},
                                                                            {"keepdims", true}})));
      auto it = count.find(gram.output_index);
      if (it == count.end()) {
        count[gram.output_index] = found;
      } else {
        KILN_ASSIGN_OR_RETURN(it->second, ctx.Call("add", {it->second, found}));
      }
    }
  }

  // [B, output_size] (or [output_size]) of counts, zeros where no n-gram landed.
  std::vector<Expr> columns;
  std::vector<Dim> column_shape = tx->shape;
  column_shape.back() = Dim::Static(1);
  for (int64_t o = 0; o < output_size; ++o) {
    auto it = count.find(o);
    if (it != count.end()) {
      columns.push_back(it->second);
      continue;
    }
    KILN_ASSIGN_OR_RETURN(Expr zeros, ctx.Call("broadcast_to", {ctx.Constant(ScalarTensor(DataType::kFloat32, 0))},
                                               MakeAttrs({{"shape", ShapeValue{column_shape}}})));
    columns.push_back(zeros);
  }
  if (columns.empty()) return ctx.Error("ngram_indexes is empty");
  Expr y = columns[0];
  if (columns.size() > 1) {
    KILN_ASSIGN_OR_RETURN(y, ctx.Call("concatenate", std::move(columns), MakeAttrs({{"axis", rank - 1}})));
  }
  if (mode != "TF") {
    if (mode == "IDF") {
      KILN_ASSIGN_OR_RETURN(Expr seen, ctx.Call("greater", {y, ctx.Constant(ScalarTensor(DataType::kFloat32, 0))}));
      KILN_ASSIGN_OR_RETURN(y, ctx.Call("cast", {seen}, MakeAttrs({{"dtype", DataType::kFloat32}})));
    }
    if (!weights.empty()) {
      Expr w = ctx.Constant(Float32Tensor({output_size}, weights));
      KILN_ASSIGN_OR_RETURN(y, ctx.Call("multiply", {y, w}));
    }
  }
  return std::vector<Expr>{y};
}

}  // namespace

void RegisterTfIdfVectorizerConverter(ConverterTable& table) {
  table.Add("TfIdfVectorizer", ConvertTfIdfVectorizer);
}

}  // namespace kiln::onnx_frontend
