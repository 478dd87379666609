// SIBuilder: the source-information builder passes use to keep spans on the
// nodes they create (the seeds' SIBuilder). Two uses:
//
// - SIBuilder(span).RecursivelyFillSpan(entry, inputs): a rewrite that turns
//   one node into several (batch_norm into multiply/add) builds the new nodes
//   without spans, then gives all of them the original node's span at once.
// - SIBuilder(entry, inputs).CreateSpan(): a rewrite that turns several nodes
//   into one (two reshapes into one) gives the new node the spans of every
//   node it replaces.
//
// How spans combine (the flattening rule of engine/ir/span.h): the collected
// spans form one SequentialSpan in which a nested SequentialSpan is spliced in
// place of itself, so [a, [b, c]] becomes [a, b, c] and a sequence never holds
// another; a span equal to one already in the list (same source name and
// range) is dropped, so [a, b, a] becomes [a, b] and each origin appears once,
// in order of first appearance; null spans are dropped; and a single origin
// is returned as that plain span, never as a one-element sequence. Repeated
// merges therefore stay flat and short however many passes merge the nodes.
//
// Both are no-ops when the PassContext option `ir.enable_si_builder` is false
// (CreateSpan returns null, RecursivelyFillSpan returns `entry` unchanged):
// the switch exists to measure what span keeping costs.
#pragma once

#include <unordered_set>
#include <vector>

#include "engine/ir/expr.h"

namespace kiln {

class SIBuilder {
 public:
  // A builder that fills `span`. Enabled per the current PassContext.
  explicit SIBuilder(Span span = nullptr);
  SIBuilder(Span span, bool enabled);

  // A builder holding the spans of the subgraph from `entry` down to, but not
  // including, `inputs`: the nodes a rewrite replaces, where `inputs` are the
  // operands it keeps. Spans are collected in pre-order from `entry` (a node
  // before its operands, operands left to right), each node once. Inputs must
  // cut the subgraph off from the rest of the graph, or the walk collects the
  // whole graph below `entry`. Operators, variables and global variables
  // contribute no span: they are references, not computations (a variable's
  // span is where it is bound).
  SIBuilder(const Expr& entry, const std::vector<Expr>& inputs);
  SIBuilder(const Expr& entry, const std::vector<Expr>& inputs, bool enabled);

  SIBuilder(const SIBuilder&) = delete;
  SIBuilder& operator=(const SIBuilder&) = delete;

  bool enabled() const { return enabled_; }

  // The builder's span: the one it was given, or the flattened SequentialSpan
  // of the collected spans (a plain Span for one origin, null for none or when
  // disabled).
  Span CreateSpan() const;

  // `entry` rebuilt so that every node without a span, from `entry` down to
  // but not past `inputs`, carries CreateSpan(). The walk also stops at nodes
  // that already have a span: they are existing nodes the rewrite reused, and
  // their operands belong to the graph that was there before. Variables are
  // never rebuilt (a new Var would be a different variable). Iterative: a long
  // chain of new nodes costs no stack depth. Returns `entry` itself when
  // nothing changed, when the builder's span is null, or when disabled.
  Expr RecursivelyFillSpan(const Expr& entry, const std::vector<Expr>& inputs) const;

  // Whether the current thread's PassContext enables SIBuilder
  // (`ir.enable_si_builder`, default true).
  static bool EnabledInCurrentContext();

 private:
  bool enabled_;
  Span span_;
};

}  // namespace kiln
