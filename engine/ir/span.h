// Source locations carried by every IR node. A Span names the source it came
// from (for ONNX models: the node name of the layer) with an optional line and
// column range (0 = unknown). A SequentialSpan is an ordered list of spans: a
// node produced by merging several nodes keeps every origin.
//
// Flattening rule (used by MakeSequentialSpan and SIBuilder): nested sequential
// spans are spliced in place, null spans are dropped, and a span equal to one
// already in the list is dropped, so the list holds each origin once in order
// of first appearance. One origin left gives that plain Span.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "engine/ir/object.h"

namespace kiln {

class SourceNameNode final : public Object {
 public:
  static constexpr bool IsKind(ObjectKind k) { return k == ObjectKind::kSourceName; }
  explicit SourceNameNode(std::string name)
      : Object(ObjectKind::kSourceName), name(std::move(name)) {}
  const std::string name;
};
using SourceName = Ref<SourceNameNode>;

inline SourceName MakeSourceName(std::string name) {
  return MakeRef<SourceNameNode>(std::move(name));
}

class SpanNode : public Object {
 public:
  static constexpr bool IsKind(ObjectKind k) {
    return k == ObjectKind::kSpan || k == ObjectKind::kSequentialSpan;
  }
  SpanNode(SourceName source, int line, int column, int end_line, int end_column)
      : Object(ObjectKind::kSpan),
        source(std::move(source)),
        line(line),
        column(column),
        end_line(end_line),
        end_column(end_column) {}

  const SourceName source;
  const int line;
  const int column;
  const int end_line;
  const int end_column;

 protected:
  explicit SpanNode(ObjectKind kind)
      : Object(kind), line(0), column(0), end_line(0), end_column(0) {}
};
using Span = Ref<SpanNode>;

class SequentialSpanNode final : public SpanNode {
 public:
  static constexpr bool IsKind(ObjectKind k) { return k == ObjectKind::kSequentialSpan; }
  explicit SequentialSpanNode(std::vector<Span> spans)
      : SpanNode(ObjectKind::kSequentialSpan), spans(std::move(spans)) {}
  // Never nested and never holding nulls (see MakeSequentialSpan).
  const std::vector<Span> spans;
};
using SequentialSpan = Ref<SequentialSpanNode>;

// A span naming only a source (line and column unknown).
Span MakeSpan(std::string_view source_name);
Span MakeSpan(SourceName source, int line = 0, int column = 0, int end_line = 0,
              int end_column = 0);

// Applies the flattening rule above. Returns null for no origins, the Span
// itself for one origin, otherwise a SequentialSpan.
Span MakeSequentialSpan(const std::vector<Span>& spans);

// Element-wise equality (source names by content, ranges exactly); a
// SequentialSpan equals another of the same elements in the same order.
bool SpanEqual(const Span& a, const Span& b);
size_t SpanHash(const Span& span);

// The source names a span refers to, in order (a plain span gives one).
std::vector<std::string> SpanSourceNames(const Span& span);

}  // namespace kiln
