// The structural limits every input a request can carry is held to: how deep
// text may nest, how many dimensions a tensor may have. They live in one place
// so the ONNX importer, the graph-text parser, the pipeline parser and the
// service refuse the same things with the same words, and so docs/service.md
// can list them. Every recursion that request data drives is bounded by one of
// these (or is an explicit stack).
#pragma once

#include <cstdint>

namespace kiln {

// Sequential( ... ) nesting in pipeline text. Real pipelines nest two or three.
inline constexpr int kMaxPipelineNesting = 64;

// Dimensions of any tensor type: ONNX value infos and initializers, input
// shape overrides, graph text. ONNX Runtime's kernels top out well below it.
inline constexpr int kMaxTensorRank = 32;

// Syntactic nesting in graph text a request sends (parentheses, tuples,
// types, attribute lists, fn/if bodies inside expressions): the visitors,
// printers and type functions that follow recurse once per level. Dataflow
// depth is not limited by this: chains are parsed and walked iteratively.
inline constexpr int kMaxSyntaxNesting = 256;

// A chain of functions marked Inline, each calling the next: the Inline pass
// expands them recursively; deeper calls stay calls.
inline constexpr int kMaxInlineNesting = 64;

// Loop-IR expression depth is bounded by construction instead: rank (above),
// fused functions (FuseOps' max_fuse_depth, at most 256) and Concat (a
// balanced tree of selects, log2 of its inputs).

}  // namespace kiln
