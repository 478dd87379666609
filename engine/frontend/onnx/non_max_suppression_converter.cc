// NonMaxSuppression as graph ops around a while_loop over candidates: every (batch, class)
// sorts its boxes by score (TopK over the whole axis, ties to the lower index), then the loop
// visits the sorted positions in order and selects a candidate when its score passes
// score_threshold, fewer than max_output_boxes_per_class boxes are selected, and no box
// selected before it overlaps it by more than iou_threshold. The selection is greedy, so each
// step depends on the ones before: the loop is the algorithm, vectorized over batches and
// classes, each step comparing one candidate per (batch, class) with every sorted position
// (O(B C N) per step, no N x N matrix).
//
// The overlap test is ONNX Runtime's (and the ONNX reference's): corners as min/max of the two
// given ones (center_point_box = 0) or centre -/+ half the size (1); an empty intersection,
// an empty box or an empty union never suppresses; else IoU = intersection / union, suppressing
// when IoU > iou_threshold.
//
// selected_indices has one row per selected box, a number only the run knows: like NonZero's,
// the output is compiled to the rows the model declares and the run checks the count
// (docs/onnx-frontend.md, "Shapes decided at run time"), or, undeclared, it is a bounded output
// of one row per candidate ("Bounded outputs").
#include <numeric>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "engine/frontend/onnx/convert_context.h"
#include "engine/frontend/onnx/converter_table.h"
#include "engine/frontend/onnx/scalar_tensors.h"
#include "engine/frontend/onnx/shape_guards.h"
#include "engine/frontend/onnx/while_loop_builder.h"
#include "engine/op/type_relations.h"
#include "engine/support/status_macros.h"

namespace kiln::onnx_frontend {
namespace {

// A float32 tensor input of rank 3 with static dims: its dims.
absl::StatusOr<std::vector<int64_t>> Rank3Float(ConvertContext& ctx, const Expr& value,
                                                const std::string& what) {
  const auto* type = value->checked_type.as<TensorTypeNode>();
  if (type == nullptr || type->dtype != DataType::kFloat32 || type->shape.size() != 3) {
    return ctx.Error(absl::StrCat(what, " must be a float32 tensor of rank 3, got ",
                                  TypeToString(value->checked_type)));
  }
  return StaticLoopShape(ctx, value->checked_type, what);
}

// The four edges of every box, [B, N] each.
struct BoxEdges {
  Expr xmin, xmax, ymin, ymax;
};

absl::StatusOr<BoxEdges> Edges(ConvertContext& ctx, const Expr& boxes, bool center_point) {
  std::vector<Expr> c(4);
  for (int64_t k = 0; k < 4; ++k) {
    KILN_ASSIGN_OR_RETURN(c[k],
                          ctx.Call("take", {boxes, ctx.Constant(ScalarTensor(DataType::kInt64, k))},
                                   MakeAttrs({{"axis", int64_t{2}}})));
  }
  BoxEdges e;
  if (center_point) {  // [x_center, y_center, width, height]
    Expr half = ctx.Constant(ScalarTensor(DataType::kFloat32, 2));
    KILN_ASSIGN_OR_RETURN(Expr half_w, ctx.Call("divide", {c[2], half}));
    KILN_ASSIGN_OR_RETURN(Expr half_h, ctx.Call("divide", {c[3], half}));
    KILN_ASSIGN_OR_RETURN(e.xmin, ctx.Call("subtract", {c[0], half_w}));
    KILN_ASSIGN_OR_RETURN(e.xmax, ctx.Call("add", {c[0], half_w}));
    KILN_ASSIGN_OR_RETURN(e.ymin, ctx.Call("subtract", {c[1], half_h}));
    KILN_ASSIGN_OR_RETURN(e.ymax, ctx.Call("add", {c[1], half_h}));
  } else {  // [y1, x1, y2, x2], any diagonal pair of corners
    KILN_ASSIGN_OR_RETURN(e.ymin, ctx.Call("minimum", {c[0], c[2]}));
    KILN_ASSIGN_OR_RETURN(e.ymax, ctx.Call("maximum", {c[0], c[2]}));
    KILN_ASSIGN_OR_RETURN(e.xmin, ctx.Call("minimum", {c[1], c[3]}));
    KILN_ASSIGN_OR_RETURN(e.xmax, ctx.Call("maximum", {c[1], c[3]}));
  }
  return e;
}

// `per_box` ([B, N]) in each (batch, class)'s score order: [B, C, N].
absl::StatusOr<Expr> InScoreOrder(ConvertContext& ctx, const Expr& per_box, const Expr& order,
                                  const std::vector<int64_t>& bcn) {
  KILN_ASSIGN_OR_RETURN(Expr row,
                        ctx.Call("expand_dims", {per_box},
                                 MakeAttrs({{"axis", int64_t{1}}, {"num_newaxis", int64_t{1}}})));
  std::vector<Dim> dims;
  for (int64_t d : bcn) dims.push_back(Dim::Static(d));
  KILN_ASSIGN_OR_RETURN(Expr every_class,
                        ctx.Call("broadcast_to", {row}, MakeAttrs({{"shape", ShapeValue{dims}}})));
  return ctx.Call("gather_elements", {every_class, order}, MakeAttrs({{"axis", int64_t{2}}}));
}

// Entry t of the last axis of a [B, C, N] tensor, kept as [B, C, 1].
absl::StatusOr<Expr> AtPosition(ConvertContext& ctx, const Expr& x, const Expr& t) {
  KILN_ASSIGN_OR_RETURN(Expr column, ctx.Call("take", {x, t}, MakeAttrs({{"axis", int64_t{2}}})));
  return ctx.Call("expand_dims", {column},
                  MakeAttrs({{"axis", int64_t{2}}, {"num_newaxis", int64_t{1}}}));
}

// For every sorted position j, whether box j and the candidate overlap by more than
// `iou_threshold`: [B, C, N] bool.
absl::StatusOr<Expr> Overlaps(ConvertContext& ctx, const BoxEdges& sorted, const Expr& area,
                              const BoxEdges& candidate, const Expr& candidate_area,
                              const Expr& iou_threshold) {
  Expr zero = ctx.Constant(ScalarTensor(DataType::kFloat32, 0));
  auto positive_extent = [&](const Expr& lo_a, const Expr& lo_b, const Expr& hi_a, const Expr& hi_b,
                             Expr* extent) -> absl::StatusOr<Expr> {
    KILN_ASSIGN_OR_RETURN(Expr lo, ctx.Call("maximum", {lo_a, lo_b}));
    KILN_ASSIGN_OR_RETURN(Expr hi, ctx.Call("minimum", {hi_a, hi_b}));
    KILN_ASSIGN_OR_RETURN(*extent, ctx.Call("subtract", {hi, lo}));
    return ctx.Call("greater", {hi, lo});
  };
  Expr width, height;
  KILN_ASSIGN_OR_RETURN(Expr x_overlap, positive_extent(sorted.xmin, candidate.xmin, sorted.xmax,
                                                        candidate.xmax, &width));
  KILN_ASSIGN_OR_RETURN(Expr y_overlap, positive_extent(sorted.ymin, candidate.ymin, sorted.ymax,
                                                        candidate.ymax, &height));
  KILN_ASSIGN_OR_RETURN(Expr intersection, ctx.Call("multiply", {width, height}));
  KILN_ASSIGN_OR_RETURN(Expr areas, ctx.Call("add", {area, candidate_area}));
  KILN_ASSIGN_OR_RETURN(Expr union_area, ctx.Call("subtract", {areas, intersection}));
  std::vector<Expr> conditions = {x_overlap, y_overlap};
  for (const Expr& positive : {intersection, area, candidate_area, union_area}) {
    KILN_ASSIGN_OR_RETURN(Expr ok, ctx.Call("greater", {positive, zero}));
    conditions.push_back(ok);
  }
  KILN_ASSIGN_OR_RETURN(Expr iou, ctx.Call("divide", {intersection, union_area}));
  KILN_ASSIGN_OR_RETURN(Expr above, ctx.Call("greater", {iou, iou_threshold}));
  conditions.push_back(above);
  Expr all = conditions[0];
  for (size_t k = 1; k < conditions.size(); ++k) {
    KILN_ASSIGN_OR_RETURN(all, ctx.Call("logical_and", {all, conditions[k]}));
  }
  return all;
}

absl::StatusOr<std::vector<Expr>> ConvertNonMaxSuppression(ConvertContext& ctx) {
  KILN_ASSIGN_OR_RETURN(int64_t center_point_box, ctx.IntAttr("center_point_box", 0));
  if (center_point_box != 0 && center_point_box != 1) {
    return ctx.Error(absl::StrCat("attribute 'center_point_box' is ", center_point_box,
                                  ", expected 0 ([y1, x1, y2, x2]) or 1 ([x_center, y_center, "
                                  "width, height])"));
  }
  KILN_ASSIGN_OR_RETURN(Expr boxes, ctx.Input(0));
  KILN_ASSIGN_OR_RETURN(Expr scores, ctx.Input(1));
  KILN_ASSIGN_OR_RETURN(std::vector<int64_t> box_dims, Rank3Float(ctx, boxes, "boxes (input 0)"));
  KILN_ASSIGN_OR_RETURN(std::vector<int64_t> bcn, Rank3Float(ctx, scores, "scores (input 1)"));
  const int64_t batches = bcn[0], classes = bcn[1], spatial = bcn[2];
  if (box_dims[2] != 4 || box_dims[0] != batches || box_dims[1] != spatial) {
    return ctx.Error(absl::StrCat("boxes are ", DimsString(box_dims), " and scores ",
                                  DimsString(bcn),
                                  "; expected boxes [num_batches, spatial_dimension, 4] for scores "
                                  "[num_batches, num_classes, spatial_dimension]"));
  }

  std::optional<std::vector<int64_t>> declared = ctx.DeclaredOutputShape(0);
  // Undeclared: a bounded output, one row per (batch, class, box) candidate, the selected filled.
  const bool bounded = !declared && ctx.CanBoundOutputs();
  if (!bounded && (!declared || declared->size() != 2 || (*declared)[1] != 3 || (*declared)[0] < 0)) {
    return ctx.Error(
        "selected_indices has one row per selected box, a number known only when the model runs: "
        "declare the output's shape [K, 3] (Kiln compiles K rows and checks the count when the "
        "model runs)");
  }
  const int64_t rows = bounded ? batches * classes * spatial : (*declared)[0];
  KILN_RETURN_IF_ERROR(ctx.ChargeBytes(batches * classes * spatial * 4 * int64_t{sizeof(int64_t)},
                                       "NonMaxSuppression's candidates"));

  // Optional operands: no max_output_boxes_per_class selects nothing (its default is 0).
  const bool has_max_output = ctx.HasInput(2);
  Expr max_output = ctx.Constant(ScalarTensor(DataType::kInt64, 0));
  Expr iou_threshold = ctx.Constant(ScalarTensor(DataType::kFloat32, 0));
  if (has_max_output) {
    KILN_ASSIGN_OR_RETURN(Expr m, ctx.Input(2));
    KILN_ASSIGN_OR_RETURN(max_output, OneElementAsScalar(ctx, m, DataType::kInt64,
                                                         "max_output_boxes_per_class (input 2)"));
  }
  if (ctx.HasInput(3)) {
    KILN_ASSIGN_OR_RETURN(Expr v, ctx.Input(3));
    KILN_ASSIGN_OR_RETURN(
        iou_threshold, OneElementAsScalar(ctx, v, DataType::kFloat32, "iou_threshold (input 3)"));
  }
  Expr score_threshold;
  if (ctx.HasInput(4)) {
    KILN_ASSIGN_OR_RETURN(Expr v, ctx.Input(4));
    KILN_ASSIGN_OR_RETURN(score_threshold, OneElementAsScalar(ctx, v, DataType::kFloat32,
                                                              "score_threshold (input 4)"));
  }

  // Selected flags per sorted position, [B, C, N]; all false without candidates.
  const std::vector<Dim> bcn_dims = {Dim::Static(batches), Dim::Static(classes),
                                     Dim::Static(spatial)};
  KILN_ASSIGN_OR_RETURN(Expr selected,
                        ctx.Call("broadcast_to", {ctx.Constant(ScalarTensor(DataType::kBool, 0))},
                                 MakeAttrs({{"shape", ShapeValue{bcn_dims}}})));
  Expr order;
  if (spatial > 0) {
    KILN_ASSIGN_OR_RETURN(
        Expr sorted,
        ctx.Call("topk", {scores},
                 MakeAttrs(
                     {{"k", spatial}, {"axis", int64_t{2}}, {"largest", true}, {"sorted", true}})));
    KILN_ASSIGN_OR_RETURN(Expr sorted_scores, ctx.TupleGetItem(sorted, 0));
    KILN_ASSIGN_OR_RETURN(order, ctx.TupleGetItem(sorted, 1));
    KILN_ASSIGN_OR_RETURN(BoxEdges edges, Edges(ctx, boxes, center_point_box == 1));
    KILN_ASSIGN_OR_RETURN(Expr width, ctx.Call("subtract", {edges.xmax, edges.xmin}));
    KILN_ASSIGN_OR_RETURN(Expr height, ctx.Call("subtract", {edges.ymax, edges.ymin}));
    KILN_ASSIGN_OR_RETURN(Expr area, ctx.Call("multiply", {width, height}));
    BoxEdges sorted_edges;
    KILN_ASSIGN_OR_RETURN(sorted_edges.xmin, InScoreOrder(ctx, edges.xmin, order, bcn));
    KILN_ASSIGN_OR_RETURN(sorted_edges.xmax, InScoreOrder(ctx, edges.xmax, order, bcn));
    KILN_ASSIGN_OR_RETURN(sorted_edges.ymin, InScoreOrder(ctx, edges.ymin, order, bcn));
    KILN_ASSIGN_OR_RETURN(sorted_edges.ymax, InScoreOrder(ctx, edges.ymax, order, bcn));
    KILN_ASSIGN_OR_RETURN(Expr sorted_area, InScoreOrder(ctx, area, order, bcn));
    Expr eligible = ctx.Constant(ScalarTensor(DataType::kBool, 1));
    if (score_threshold) {
      KILN_ASSIGN_OR_RETURN(eligible, ctx.Call("greater", {sorted_scores, score_threshold}));
    }

    // The loop over sorted positions t: state (selected [B, C, N], count [B, C]).
    WhileLoopBuilder loop(ctx);
    KILN_ASSIGN_OR_RETURN(Var selected_so_far,
                          loop.AddState("selected", selected, "the selected boxes"));
    KILN_ASSIGN_OR_RETURN(
        Expr no_counts,
        ctx.Call("broadcast_to", {ctx.Constant(ScalarTensor(DataType::kInt64, 0))},
                 MakeAttrs({{"shape", ShapeValue{std::vector<Dim>{Dim::Static(batches),
                                                                  Dim::Static(classes)}}}})));
    KILN_ASSIGN_OR_RETURN(Var count, loop.AddState("count", no_counts, "the selection counts"));
    const Expr& t = loop.iteration();
    BoxEdges candidate;
    KILN_ASSIGN_OR_RETURN(candidate.xmin, AtPosition(ctx, sorted_edges.xmin, t));
    KILN_ASSIGN_OR_RETURN(candidate.xmax, AtPosition(ctx, sorted_edges.xmax, t));
    KILN_ASSIGN_OR_RETURN(candidate.ymin, AtPosition(ctx, sorted_edges.ymin, t));
    KILN_ASSIGN_OR_RETURN(candidate.ymax, AtPosition(ctx, sorted_edges.ymax, t));
    KILN_ASSIGN_OR_RETURN(Expr candidate_area, AtPosition(ctx, sorted_area, t));
    KILN_ASSIGN_OR_RETURN(Expr overlaps, Overlaps(ctx, sorted_edges, sorted_area, candidate,
                                                  candidate_area, iou_threshold));
    KILN_ASSIGN_OR_RETURN(Expr suppressors, ctx.Call("logical_and", {selected_so_far, overlaps}));
    // Kept when no selected box overlaps it: the largest flag over the positions is 0.
    KILN_ASSIGN_OR_RETURN(
        Expr flags, ctx.Call("cast", {suppressors}, MakeAttrs({{"dtype", DataType::kInt32}})));
    KILN_ASSIGN_OR_RETURN(
        Expr any,
        ctx.Call("max", {flags}, MakeAttrs({{"axis", IntArray({2})}, {"keepdims", false}})));
    KILN_ASSIGN_OR_RETURN(
        Expr kept, ctx.Call("equal", {any, ctx.Constant(ScalarTensor(DataType::kInt32, 0))}));
    KILN_ASSIGN_OR_RETURN(Expr room, ctx.Call("less", {count, max_output}));
    KILN_ASSIGN_OR_RETURN(Expr take, ctx.Call("logical_and", {kept, room}));
    if (score_threshold) {
      KILN_ASSIGN_OR_RETURN(Expr passes,
                            ctx.Call("take", {eligible, t}, MakeAttrs({{"axis", int64_t{2}}})));
      KILN_ASSIGN_OR_RETURN(take, ctx.Call("logical_and", {take, passes}));
    }
    std::vector<int64_t> positions(static_cast<size_t>(spatial));
    std::iota(positions.begin(), positions.end(), 0);
    KILN_ASSIGN_OR_RETURN(Expr here,
                          ctx.Call("equal", {ctx.Constant(Int64Tensor({spatial}, positions)), t}));
    KILN_ASSIGN_OR_RETURN(Expr take_column,
                          ctx.Call("expand_dims", {take},
                                   MakeAttrs({{"axis", int64_t{2}}, {"num_newaxis", int64_t{1}}})));
    KILN_ASSIGN_OR_RETURN(Expr newly, ctx.Call("logical_and", {here, take_column}));
    KILN_ASSIGN_OR_RETURN(Expr next_selected, ctx.Call("logical_or", {selected_so_far, newly}));
    KILN_ASSIGN_OR_RETURN(Expr took,
                          ctx.Call("cast", {take}, MakeAttrs({{"dtype", DataType::kInt64}})));
    KILN_ASSIGN_OR_RETURN(Expr next_count, ctx.Call("add", {count, took}));
    KILN_RETURN_IF_ERROR(loop.SetNext(2, next_selected, "the selected boxes"));
    KILN_RETURN_IF_ERROR(loop.SetNext(3, next_count, "the selection counts"));
    KILN_ASSIGN_OR_RETURN(Expr next_cond,
                          loop.NextBelow(ctx.Constant(ScalarTensor(DataType::kInt64, spatial))));
    // Without max_output_boxes_per_class nothing is selected: the loop does not run.
    Expr run = ctx.Constant(ScalarTensor(DataType::kBool, has_max_output ? 1 : 0));
    KILN_ASSIGN_OR_RETURN(Expr state, loop.Build(run, next_cond));
    KILN_ASSIGN_OR_RETURN(selected, ctx.TupleGetItem(state, 2));
  }

  // Rows (batch, class, box) of the selected positions, in (batch, class, score) order.
  const int64_t candidates = batches * classes * spatial;
  KILN_ASSIGN_OR_RETURN(Expr flags, ctx.Call("reshape", {selected},
                                             MakeAttrs({{"newshape", IntArray({candidates})}})));
  std::vector<int64_t> triples;
  triples.reserve(static_cast<size_t>(candidates) * 3);
  for (int64_t b = 0; b < batches; ++b) {
    for (int64_t c = 0; c < classes; ++c) {
      for (int64_t t = 0; t < spatial; ++t) triples.insert(triples.end(), {b, c, 0});
    }
  }
  Expr batch_class = ctx.Constant(Int64Tensor({batches, classes, spatial, 3}, triples));
  Expr table = batch_class;
  if (order) {  // the box column: the sorted order, in the last slot
    std::vector<int64_t> last = {0, 0, 1};
    KILN_ASSIGN_OR_RETURN(Expr box_column,
                          ctx.Call("expand_dims", {order},
                                   MakeAttrs({{"axis", int64_t{3}}, {"num_newaxis", int64_t{1}}})));
    KILN_ASSIGN_OR_RETURN(Expr box_part,
                          ctx.Call("multiply", {box_column, ctx.Constant(Int64Tensor({3}, last))}));
    KILN_ASSIGN_OR_RETURN(table, ctx.Call("add", {batch_class, box_part}));
  }
  KILN_ASSIGN_OR_RETURN(
      table, ctx.Call("reshape", {table}, MakeAttrs({{"newshape", IntArray({candidates, 3})}})));
  KILN_ASSIGN_OR_RETURN(Expr out, ctx.Call("compress", {table, flags},
                                           MakeAttrs({{"axis", int64_t{0}}, {"count", rows}})));
  if (bounded) {
    KILN_ASSIGN_OR_RETURN(Expr length, NonzeroCount(ctx, flags));
    ctx.MarkBounded(0, 0, length);
  } else {
    KILN_ASSIGN_OR_RETURN(Expr ok, NonzeroCountIs(ctx, flags, rows));
    KILN_ASSIGN_OR_RETURN(out,
                          GuardCondition(ctx, out, ok,
                                         absl::StrCat("the inputs must select ", rows,
                                                      " boxes (the rows the model declares for "
                                                      "selected_indices and was compiled for)")));
  }
  if (ctx.HasInput(3)) {  // as ONNX Runtime refuses a threshold outside [0, 1]
    KILN_ASSIGN_OR_RETURN(
        Expr low, ctx.Call("greater_equal",
                           {iou_threshold, ctx.Constant(ScalarTensor(DataType::kFloat32, 0))}));
    KILN_ASSIGN_OR_RETURN(
        Expr high,
        ctx.Call("less_equal", {iou_threshold, ctx.Constant(ScalarTensor(DataType::kFloat32, 1))}));
    KILN_ASSIGN_OR_RETURN(Expr within, ctx.Call("logical_and", {low, high}));
    KILN_ASSIGN_OR_RETURN(
        out, GuardCondition(ctx, out, within, "iou_threshold (input 3) must lie in [0, 1]"));
  }
  return std::vector<Expr>{out};
}

}  // namespace

void RegisterNonMaxSuppressionConverter(ConverterTable& table) {
  table.Add("NonMaxSuppression", ConvertNonMaxSuppression);
}

}  // namespace kiln::onnx_frontend
