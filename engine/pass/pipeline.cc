// Pipeline text: a small recursive-descent parser over the pass registry,
// the printer that writes any pass back, and the default pipelines.
#include "engine/pass/pipeline.h"

#include <algorithm>
#include <vector>

#include "absl/strings/str_cat.h"
#include "engine/parser/diagnostic.h"
#include "engine/support/identifier.h"
#include "engine/support/request_limits.h"

namespace kiln {
namespace {

constexpr char kSequentialKeyword[] = "Sequential";

class PipelineParser {
 public:
  PipelineParser(std::string_view text, const PassRegistry& registry)
      : text_(text), registry_(registry) {}

  absl::StatusOr<Pass> Parse() {
    absl::StatusOr<std::vector<Pass>> passes = ParseList(/*nested=*/false);
    if (!passes.ok()) return passes.status();
    SkipSpace();
    if (pos_ < text_.size()) return Error(pos_, "expected ',' between passes");
    return Sequential(*std::move(passes));
  }

 private:
  static bool IsNameChar(char c) { return IsIdentChar(c) || c == '.'; }
  static bool IsValueChar(char c) {
    return c != ',' && c != '{' && c != '}' && c != '(' && c != ')' && c != '=' && c != '"' &&
           c != ' ' && c != '\t' && c != '\n' && c != '\r';
  }

  void SkipSpace() {
    while (pos_ < text_.size() && (text_[pos_] == ' ' || text_[pos_] == '\t' ||
                                   text_[pos_] == '\n' || text_[pos_] == '\r')) {
      ++pos_;
    }
  }
  bool Peek(char c) {
    SkipSpace();
    return pos_ < text_.size() && text_[pos_] == c;
  }
  bool Consume(char c) {
    if (!Peek(c)) return false;
    ++pos_;
    return true;
  }

  // `pipeline:LINE:COL: error: MESSAGE`, then the line (a window of it when
  // long) and a caret under the column, as the IR parser's errors read.
  absl::Status Error(size_t offset, std::string_view message) const {
    return MakeParseError("pipeline", text_, offset, message);
  }

  absl::StatusOr<std::vector<Pass>> ParseList(bool nested) {
    std::vector<Pass> passes;
    SkipSpace();
    // An empty pipeline (or `Sequential()`) is an empty list.
    if (pos_ == text_.size() || (nested && Peek(')'))) return passes;
    while (true) {
      absl::StatusOr<Pass> pass = ParseEntry();
      if (!pass.ok()) return pass.status();
      passes.push_back(*std::move(pass));
      if (!Consume(',')) break;
    }
    return passes;
  }

  absl::StatusOr<std::string> ParseName(std::string_view what) {
    SkipSpace();
    size_t start = pos_;
    if (pos_ >= text_.size() || !IsIdentStart(text_[pos_])) {
      return Error(pos_, absl::StrCat("expected ", std::string(what)));
    }
    while (pos_ < text_.size() && IsNameChar(text_[pos_])) ++pos_;
    return std::string(text_.substr(start, pos_ - start));
  }

  absl::StatusOr<Pass> ParseEntry() {
    SkipSpace();
    size_t name_offset = pos_;
    absl::StatusOr<std::string> name = ParseName("a pass name");
    if (!name.ok()) return name.status();

    if (*name == kSequentialKeyword && Peek('(')) {
      // The parser recurses once per level, and so does running the result.
      if (nesting_ >= kMaxPipelineNesting) {
        return Error(name_offset, absl::StrCat("Sequential(...) nests deeper than the limit of ",
                                               kMaxPipelineNesting, " levels"));
      }
      ++pos_;
      ++nesting_;
      absl::StatusOr<std::vector<Pass>> passes = ParseList(/*nested=*/true);
      --nesting_;
      if (!passes.ok()) return passes.status();
      if (!Consume(')')) return Error(pos_, "expected ',' or ')' after a pass in Sequential(...)");
      return Sequential(*std::move(passes));
    }

    const PassRegistration* entry = registry_.Find(*name);
    if (entry == nullptr) {
      return Error(name_offset, absl::StrCat("unknown pass '", *name,
                                             "'; valid passes: ", registry_.ValidNames()));
    }
    if (Peek('(')) {
      return Error(pos_, absl::StrCat("'", *name, "' is a pass: options go in {key=value}; only ",
                                      kSequentialKeyword, "(...) takes a list of passes"));
    }
    PassOptions::Given options;
    if (Consume('{')) {
      while (true) {
        SkipSpace();
        size_t key_offset = pos_;
        absl::StatusOr<std::string> key = ParseName("an option name");
        if (!key.ok()) return key.status();
        const PassOptionSpec* spec = nullptr;
        for (const PassOptionSpec& candidate : entry->options) {
          if (candidate.name == *key) spec = &candidate;
        }
        if (spec == nullptr) {
          std::string valid;
          for (const PassOptionSpec& candidate : entry->options) {
            absl::StrAppend(&valid, valid.empty() ? "" : ", ", candidate.name);
          }
          return Error(key_offset,
                       absl::StrCat("pass '", *name, "' has no option '", *key,
                                    "'; valid options: ", valid.empty() ? "none" : valid));
        }
        for (const auto& [seen, unused] : options) {
          if (seen == *key)
            return Error(key_offset, absl::StrCat("option '", *key, "' is given twice"));
        }
        if (!Consume('=')) return Error(pos_, absl::StrCat("expected '=' after '", *key, "'"));
        SkipSpace();
        size_t value_offset = pos_;
        absl::StatusOr<std::string> text = ParseValueText();
        if (!text.ok()) return text.status();
        absl::StatusOr<ConfigValue> value = spec->type == ConfigType::kString
                                                ? ConfigValue(*text)
                                                : ParseConfigValue(*text, spec->type);
        if (!value.ok()) {
          return Error(value_offset, absl::StrCat("option '", *key, "' of pass '", *name,
                                                  "': ", std::string(value.status().message())));
        }
        options.emplace_back(*key, *std::move(value));
        if (Consume(',')) continue;
        if (Consume('}')) break;
        return Error(pos_, "expected ',' or '}' after an option");
      }
    }
    absl::StatusOr<Pass> pass = registry_.Create(*name, options);
    if (!pass.ok()) return Error(name_offset, std::string(pass.status().message()));
    return pass;
  }

  // A bare word, or a "quoted string" with \" and \\ escapes.
  absl::StatusOr<std::string> ParseValueText() {
    size_t start = pos_;
    if (pos_ < text_.size() && text_[pos_] == '"') {
      std::string value;
      ++pos_;
      while (pos_ < text_.size() && text_[pos_] != '"') {
        if (text_[pos_] == '\\' && pos_ + 1 < text_.size()) ++pos_;
        value += text_[pos_++];
      }
      if (pos_ >= text_.size()) return Error(start, "unterminated string");
      ++pos_;
      return value;
    }
    while (pos_ < text_.size() && IsValueChar(text_[pos_])) ++pos_;
    if (pos_ == start) return Error(pos_, "expected a value");
    return std::string(text_.substr(start, pos_ - start));
  }

  std::string_view text_;
  const PassRegistry& registry_;
  size_t pos_ = 0;
  int nesting_ = 0;
};

void PrintEntry(const Pass& pass, std::string* out);

void PrintList(const std::vector<Pass>& passes, std::string* out) {
  for (size_t i = 0; i < passes.size(); ++i) {
    if (i > 0) *out += ',';
    PrintEntry(passes[i], out);
  }
}

void PrintEntry(const Pass& pass, std::string* out) {
  if (const auto* registered = dynamic_cast<const RegisteredPassNode*>(pass.get())) {
    *out += registered->registered_name();
    if (!registered->options().empty()) {
      *out += '{';
      bool first = true;
      for (const auto& [key, value] : registered->options()) {
        absl::StrAppend(out, first ? "" : ",", key, "=", FormatConfigValue(value));
        first = false;
      }
      *out += '}';
    }
    return;
  }
  if (const auto* sequential = dynamic_cast<const SequentialNode*>(pass.get())) {
    absl::StrAppend(out, kSequentialKeyword, "(");
    PrintList(sequential->passes(), out);
    *out += ')';
    return;
  }
  *out += pass->info().name;
}

}  // namespace

absl::StatusOr<Pass> ParsePipeline(std::string_view text, const PassRegistry& registry) {
  return PipelineParser(text, registry).Parse();
}

std::string PrintPipeline(const Pass& pass) {
  std::string out;
  if (const auto* sequential = dynamic_cast<const SequentialNode*>(pass.get())) {
    PrintList(sequential->passes(), &out);
  } else {
    PrintEntry(pass, &out);
  }
  return out;
}

const std::string& DefaultPipeline(int opt_level) {
  // TVM's build pipeline, split by level instead of filtered by each pass's
  // opt level at run time, so what -ON runs can be read here and in
  // docs/passes.md. FuseOps runs at every level: lowering needs primitive
  // functions. At -O3, Inline runs before FuseOps so inlined bodies are fused,
  // FoldConstant runs again after FoldScaleAxis to multiply the scales into
  // the weights, which ConvertLayout then packs blocked.
  static const std::string* const kPipelines = new std::string[4]{
      // -O0
      "RemoveUnusedFunctions,SimplifyInference,InferType,FuseOps{fuse_opt_level=0},InferType",
      // -O1
      "RemoveUnusedFunctions,SimplifyInference,SimplifyExpr,DeadCodeElimination,InferType,"
      "FuseOps{fuse_opt_level=1},InferType,LabelOps",
      // -O2
      "RemoveUnusedFunctions,SimplifyInference,SimplifyExpr,FoldConstant,DeadCodeElimination,"
      "InferType,FuseOps{fuse_opt_level=2},InferType,LabelOps",
      // -O3
      "RemoveUnusedFunctions,SimplifyInference,EliminateCommonSubexpr,SimplifyExpr,FoldConstant,"
      "FuseLayerNorm,FoldScaleAxis,CanonicalizeOps,SimplifyExpr,FoldConstant,ConvertLayout,FoldGateIntoWeights,"
      "DeadCodeElimination,"
      "InferType,"
      "Inline,RemoveUnusedFunctions,InferType,FuseOps{fuse_opt_level=2},InferType,LabelOps",
  };
  return kPipelines[std::clamp(opt_level, 0, 3)];
}

}  // namespace kiln
