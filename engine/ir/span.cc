// Span construction, flattening and comparison.
#include "engine/ir/span.h"

#include <functional>
#include <string>
#include <unordered_set>

#include "absl/strings/str_cat.h"

namespace kiln {

Span MakeSpan(std::string_view source_name) {
  return MakeRef<SpanNode>(MakeSourceName(std::string(source_name)), 0, 0, 0, 0);
}

Span MakeSpan(SourceName source, int line, int column, int end_line, int end_column) {
  return MakeRef<SpanNode>(std::move(source), line, column, end_line, end_column);
}

namespace {

// What PlainSpanEqual compares, as a key: a SequentialSpan of thousands of layers (a shared
// kernel's, main's workspace's) dedupes in linear time.
std::string PlainSpanKey(const SpanNode& span) {
  return absl::StrCat(span.line, ":", span.column, ":", span.end_line, ":", span.end_column, ":",
                      span.source ? 1 : 0, ":", span.source ? span.source->name : std::string());
}

void AppendFlattened(const Span& span, std::vector<Span>* out,
                     std::unordered_set<std::string>* seen) {
  if (!span) return;
  if (const auto* seq = span.as<SequentialSpanNode>()) {
    for (const Span& inner : seq->spans) AppendFlattened(inner, out, seen);
    return;
  }
  if (seen->insert(PlainSpanKey(*span)).second) out->push_back(span);
}

bool PlainSpanEqual(const SpanNode* a, const SpanNode* b) {
  if (a == b) return true;
  if (a->line != b->line || a->column != b->column || a->end_line != b->end_line ||
      a->end_column != b->end_column) {
    return false;
  }
  if (a->source.same_as(b->source)) return true;
  if (!a->source || !b->source) return false;
  return a->source->name == b->source->name;
}

}  // namespace

Span MakeSequentialSpan(const std::vector<Span>& spans) {
  std::vector<Span> flat;
  std::unordered_set<std::string> seen;
  for (const Span& span : spans) AppendFlattened(span, &flat, &seen);
  if (flat.empty()) return Span();
  if (flat.size() == 1) return flat[0];
  return MakeRef<SequentialSpanNode>(std::move(flat));
}

bool SpanEqual(const Span& a, const Span& b) {
  if (a.same_as(b)) return true;
  if (!a || !b) return false;
  const auto* seq_a = a.as<SequentialSpanNode>();
  const auto* seq_b = b.as<SequentialSpanNode>();
  if ((seq_a == nullptr) != (seq_b == nullptr)) return false;
  if (seq_a == nullptr) return PlainSpanEqual(a.get(), b.get());
  if (seq_a->spans.size() != seq_b->spans.size()) return false;
  for (size_t i = 0; i < seq_a->spans.size(); ++i) {
    if (!SpanEqual(seq_a->spans[i], seq_b->spans[i])) return false;
  }
  return true;
}

size_t SpanHash(const Span& span) {
  if (!span) return 0;
  if (const auto* seq = span.as<SequentialSpanNode>()) {
    size_t h = 0x5e95;
    for (const Span& inner : seq->spans) h = h * 31 + SpanHash(inner);
    return h;
  }
  size_t h = span->source ? std::hash<std::string>()(span->source->name) : 0;
  for (int v : {span->line, span->column, span->end_line, span->end_column}) h = h * 31 + v;
  return h;
}

std::vector<std::string> SpanSourceNames(const Span& span) {
  std::vector<std::string> names;
  if (!span) return names;
  if (const auto* seq = span.as<SequentialSpanNode>()) {
    for (const Span& inner : seq->spans) {
      if (inner->source) names.push_back(inner->source->name);
    }
  } else if (span->source) {
    names.push_back(span->source->name);
  }
  return names;
}

}  // namespace kiln
