// Span comments: `si=conv1`, `si="onnx::Conv_12":3:1-3:9`, `si=[a, b]`.
#include <string>

#include "absl/strings/str_cat.h"
#include "engine/printer/graph/graph_builders.h"
#include "engine/printer/literal_text.h"
#include "engine/support/identifier.h"

namespace kiln::printer::graph {

namespace {

bool IsBareSourceName(std::string_view name) {
  return !name.empty() && IsIdentStart(name[0]) && AllIdentChars(name, ".-/");
}

void AppendSpanText(const SpanNode* span, std::string* out) {
  if (span->kind() == ObjectKind::kSequentialSpan) {
    const auto* sequence = static_cast<const SequentialSpanNode*>(span);
    out->push_back('[');
    for (size_t i = 0; i < sequence->spans.size(); ++i) {
      if (i != 0) out->append(", ");
      AppendSpanText(sequence->spans[i].get(), out);
    }
    out->push_back(']');
    return;
  }
  std::string_view name = span->source ? std::string_view(span->source->name) : "";
  if (IsBareSourceName(name)) {
    out->append(name);
  } else {
    AppendQuoted(name, out);
  }
  if (span->line != 0 || span->column != 0 || span->end_line != 0 || span->end_column != 0) {
    absl::StrAppend(out, ":", span->line, ":", span->column, "-", span->end_line, ":",
                    span->end_column);
  }
}

}  // namespace

std::string SpanText(const Span& span) {
  std::string text;
  if (span) AppendSpanText(span.get(), &text);
  return text;
}

std::string SpanComment(const IRDocsifier& d, const Span& span, std::string_view key) {
  if (!span || !d.options().show_spans) return std::string();
  std::string comment(key);
  comment.push_back('=');
  AppendSpanText(span.get(), &comment);
  return comment;
}

}  // namespace kiln::printer::graph
