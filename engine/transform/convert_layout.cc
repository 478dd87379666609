// ConvertLayout: a post-order rewriter that remembers, for each value it
// computes blocked, the blocked expression behind the NCHW view it returns.
#include "engine/transform/convert_layout.h"

#include <cstring>
#include <unordered_map>

#include "absl/strings/str_cat.h"
#include "engine/ir/expr_mutator.h"
#include "engine/op/layout.h"
#include "engine/op/op_registry.h"
#include "engine/op/type_relations.h"
#include "engine/pass/pass_context.h"
#include "engine/pass/rewriter_pass.h"
#include "engine/support/compile_budget.h"
#include "engine/support/huge_pages.h"
#include "engine/support/status_macros.h"
#include "engine/transform/device_util.h"
#include "engine/transform/expr_builder.h"

namespace kiln::transform {
namespace {

// The static shape of a float tensor-typed expression, or empty.
std::vector<int64_t> StaticShape(const Expr& expr) {
  const auto* type = expr->checked_type.as<TensorTypeNode>();
  if (type == nullptr) return {};
  std::vector<int64_t> shape;
  for (const Dim& d : type->shape) {
    if (!d.is_static()) return {};
    shape.push_back(d.value);
  }
  return shape;
}

// Panels (blocks of outputs) a product over packed panels accumulates at once: the matmul
// schedule's widest tile of the batch axis (lower/default_schedule.h, kReductionChannelTiles).
constexpr int64_t kPanelsPerTile = 4;

bool IsFloatTensor(const Expr& expr) {
  const auto* type = expr->checked_type.as<TensorTypeNode>();
  return type != nullptr && IsFloat(type->dtype);
}

// result[i] = source[offset(i)] over `shape` in row-major order, where axis d steps the source
// offset by step[d] (a packing of constants whose elements are `Element`-sized).
template <typename Element>
void Gather(const std::string& source, std::string& result, const std::vector<int64_t>& shape,
            const std::vector<int64_t>& step) {
  const int64_t rank = static_cast<int64_t>(shape.size());
  const int64_t count = static_cast<int64_t>(result.size() / sizeof(Element));
  if (count == 0) return;
  if (rank == 0) {
    std::memcpy(result.data(), source.data(), sizeof(Element));
    return;
  }
  // The innermost axis as one loop (most of the elements), the outer ones as an odometer
  // keeping `offset` in step.
  const int64_t inner = shape[rank - 1], inner_step = step[rank - 1];
  std::vector<int64_t> index(shape.size(), 0);
  int64_t offset = 0;
  char* out = result.data();
  for (int64_t flat = 0; flat < count; flat += inner) {
    for (int64_t i = 0; i < inner; ++i, out += sizeof(Element)) {
      std::memcpy(out, source.data() + (offset + i * inner_step) * sizeof(Element),
                  sizeof(Element));
    }
    for (int64_t d = rank - 2; d >= 0; --d) {
      offset += step[d];
      if (++index[d] < shape[d]) break;
      offset -= step[d] * shape[d];
      index[d] = 0;
    }
  }
}

class LayoutConverter : public PostOrderRewriter {
 public:
  LayoutConverter(int64_t block, CompileBudget* budget)
      : block_(block), blocked_layout_(absl::StrCat("NCHW", block, "c")), budget_(budget) {}

 protected:
  Result Rewrite_(const CallNode* /*pre*/, const Expr& post) override {
    static const OpRegistry& ops = OpRegistry::Global();
    static const OpEntry& conv = ops.Get("nn.conv2d");
    static const OpEntry& global_avg = ops.Get("nn.global_avg_pool2d");
    static const OpEntry& global_max = ops.Get("nn.global_max_pool2d");
    static const OpEntry& concatenate = ops.Get("concatenate");
    static const OpEntry& dense = ops.Get("nn.dense");
    static const OpEntry& matmul = ops.Get("nn.matmul");
    static const OpEntry& max_pool = ops.Get("nn.max_pool2d");
    static const OpEntry& avg_pool = ops.Get("nn.avg_pool2d");
    const auto* call = post.as<CallNode>();
    const OpEntry* entry = ops.FindCallee(call->op);
    if (entry == nullptr || block_ <= 0) return post;
    if (entry == &dense) return ConvertDense(call, post);
    if (entry == &matmul) return ConvertMatmul(call, post);
    std::vector<int64_t> shape = StaticShape(post);
    if (shape.size() != 4 || !IsFloatTensor(post)) return post;
    if (entry == &conv) return ConvertConv(call, post);
    // Channels that do not fill the last block are zero-padded (see PaddedChannels): only ops
    // that keep the padding lanes finite compute on such values.
    if (shape[1] % block_ != 0 && !KeepsPaddingFinite(*entry, call)) return post;
    if (entry == &global_avg || entry == &global_max) {
      auto it = blocked_.find(call->args[0].get());
      if (it == blocked_.end()) return post;
      Attrs attrs = MakeAttrs({{"axis", IntArray({2, 3})}, {"keepdims", AttrValue(true)}});
      KILN_ASSIGN_OR_RETURN(Expr pooled, MakeTypedCall(entry == &global_avg ? "mean" : "max",
                                                       {it->second.blocked}, attrs, post->span));
      return Record(post, pooled);
    }
    if (entry == &concatenate) return ConvertConcat(call, post);
    if (entry == &max_pool || entry == &avg_pool) return ConvertPool(call, post);
    if ((entry->pattern == OpPattern::kElementwise || entry->pattern == OpPattern::kBroadcast) &&
        entry->FindAttr("axis") == nullptr) {
      return ConvertElementwise(call, post, shape);
    }
    return post;
  }

 private:
  struct Converted {
    Expr back;     // layout_transform(blocked, NCHW{b}c -> NCHW): kept alive for the map key
    Expr blocked;  // the value in NCHW{b}c
  };

  // `channels` rounded up to whole blocks.
  int64_t PaddedChannels(int64_t channels) const {
    return (channels + block_ - 1) / block_ * block_;
  }

  // Padding lanes start as zeros (a padded transform, or a convolution whose padded output
  // channels have zero weights and bias) and meet zero weights in the next convolution, so any
  // op that maps finite values to finite values may compute on them. A divisor must be a nonzero
  // scalar constant.
  static bool KeepsPaddingFinite(const OpEntry& entry, const CallNode* call) {
    static const char* const kFinite[] = {"add",     "subtract", "multiply",      "maximum",
                                          "minimum", "nn.relu",  "clip",          "sigmoid",
                                          "tanh",    "negative", "nn.leaky_relu", "mean",
                                          "nn.global_avg_pool2d", "nn.global_max_pool2d",
                                          "nn.max_pool2d", "nn.avg_pool2d"};
    for (const char* name : kFinite) {
      if (entry.name == name) return true;
    }
    if (entry.name == "divide" && call->args.size() == 2) {
      const auto* divisor = call->args[1].as<ConstantNode>();
      return divisor != nullptr && divisor->data->shape.empty() &&
             ConstantElement(*divisor->data, 0) != 0;
    }
    return false;
  }

  Attrs TransformAttrs(const std::string& from, const std::string& to) const {
    return MakeAttrs({{"src_layout", AttrValue(from)}, {"dst_layout", AttrValue(to)}});
  }

  // A new constant of `bytes` (`shape`, `dtype`), charged to the compile's budget.
  Result NewConstant(DataType dtype, const std::vector<int64_t>& shape, std::string bytes,
                     const Span& span) {
    Expr constant = MakeConstant(MakeTensorData(dtype, shape, std::move(bytes)), span);
    std::vector<Dim> dims;
    for (int64_t extent : shape) dims.push_back(Dim::Static(extent));
    return WithFields(constant, ExprFields{span, MakeTensorType(std::move(dims), dtype), nullptr});
  }

  absl::Status Charge(const TensorDataNode& data) {
    if (budget_ == nullptr) return absl::OkStatus();
    return budget_->Charge(static_cast<int64_t>(data.bytes.size()),
                           "ConvertLayout: a constant re-laid out");
  }

  // A constant's elements, read as shape `shape` in the unblocked layout `from_name`, in layout
  // `to_name`: packed here rather than by a layout_transform for FoldConstant, which would run
  // every weight of the model through the interpreter.
  // `padded` (default: `shape`) is the shape in `from` after zeros are appended along each axis,
  // channels rounded up to whole blocks.
  Result Pack(const TensorDataNode& data, const std::string& from_name, const std::string& to_name,
              const std::vector<int64_t>& shape, const Span& span,
              std::vector<int64_t> padded = {}) {
    if (padded.empty()) padded = shape;
    KILN_ASSIGN_OR_RETURN(Layout from, Layout::Parse(from_name));
    KILN_ASSIGN_OR_RETURN(Layout to, Layout::Parse(to_name));
    KILN_ASSIGN_OR_RETURN(std::vector<int64_t> to_shape, TransformShape(from, to, padded));
    KILN_RETURN_IF_ERROR(Charge(data));
    if (padded != shape) {
      const int64_t element_bytes = DataTypeBytes(data.dtype);
      int64_t count = 1;
      for (int64_t extent : padded) count *= extent;
      if (budget_ != nullptr) {
        KILN_RETURN_IF_ERROR(budget_->Charge(count * element_bytes,
                                             "ConvertLayout: a constant padded to whole blocks"));
      }
      std::string bytes = ZeroedBytes(static_cast<size_t>(count * element_bytes));
      // Row-major rows of the last axis, each copied to its place in the padded shape.
      const int64_t row = shape.back() * element_bytes;
      std::vector<int64_t> index(shape.size(), 0);
      for (int64_t source = 0; source < static_cast<int64_t>(data.bytes.size()); source += row) {
        int64_t target = 0;
        for (size_t d = 0; d < shape.size(); ++d) target = target * padded[d] + index[d];
        std::memcpy(bytes.data() + target * element_bytes, data.bytes.data() + source,
                    static_cast<size_t>(row));
        for (int64_t d = static_cast<int64_t>(shape.size()) - 2; d >= 0; --d) {
          if (++index[d] < shape[d]) break;
          index[d] = 0;
        }
      }
      TensorData padded_data = MakeTensorData(data.dtype, padded, std::move(bytes));
      return Pack(*padded_data, from_name, to_name, padded, span);
    }
    // From an unblocked layout the source offset is linear in the result's index: axis d of
    // `to` steps the source by its primal axis's stride, times the block size for the outer
    // axis of a split one.
    std::vector<int64_t> from_strides(shape.size(), 1);
    for (int64_t d = static_cast<int64_t>(shape.size()) - 2; d >= 0; --d) {
      from_strides[d] = from_strides[d + 1] * shape[d + 1];
    }
    std::vector<int64_t> step(to.rank());
    for (size_t d = 0; d < to.rank(); ++d) {
      const Layout::Axis& axis = to.axes()[d];
      char primal = axis.factor == 0 ? axis.name : static_cast<char>(axis.name - 'a' + 'A');
      int64_t stride = from_strides[from.Find(primal)];
      step[d] = axis.factor == 0 ? stride * to.Factor(primal) : stride;
    }
    std::string bytes(data.bytes.size(), '\0');
    switch (DataTypeBytes(data.dtype)) {
      case 1: Gather<uint8_t>(data.bytes, bytes, to_shape, step); break;
      case 2: Gather<uint16_t>(data.bytes, bytes, to_shape, step); break;
      case 4: Gather<uint32_t>(data.bytes, bytes, to_shape, step); break;
      case 8: Gather<uint64_t>(data.bytes, bytes, to_shape, step); break;
      default:
        return absl::InternalError(absl::StrCat("ConvertLayout: cannot pack ",
                                                DataTypeName(data.dtype), " constants"));
    }
    return NewConstant(data.dtype, to_shape, std::move(bytes), span);
  }

  // `blocked` seen as NCHW by the rest of the graph: the view `post` becomes.
  Result Record(const Expr& post, const Expr& blocked) {
    KILN_ASSIGN_OR_RETURN(Expr back,
                          MakeTypedCall("layout_transform", {blocked},
                                        TransformAttrs(blocked_layout_, "NCHW"), post->span));
    const int64_t channels = StaticShape(post)[1];
    if (channels % block_ != 0) {  // drop the padding channels
      KILN_ASSIGN_OR_RETURN(
          back, MakeTypedCall("strided_slice", {back},
                              MakeAttrs({{"begin", IntArray({0})},
                                         {"end", IntArray({channels})},
                                         {"axes", IntArray({1})}}),
                              post->span));
    }
    back = WithFields(back, ExprFields{post->span, post->checked_type, post->virtual_device});
    blocked_[back.get()] = Converted{back, blocked};
    return back;
  }

  // `value` (4-D NCHW) in NCHW{b}c: the blocked value behind a view, else a transform.
  Result Blocked(const Expr& value, const Span& span) {
    if (auto it = blocked_.find(value.get()); it != blocked_.end()) return it->second.blocked;
    if (auto it = reblocked_.find(value.get()); it != reblocked_.end()) return it->second.blocked;
    Expr whole_blocks = value;
    const int64_t channels = StaticShape(value)[1];
    if (channels % block_ != 0) {  // zero channels up to whole blocks
      KILN_ASSIGN_OR_RETURN(
          whole_blocks,
          MakeTypedCall("nn.pad",
                        {value, MakeTypedScalar(value->checked_type.as<TensorTypeNode>()->dtype,
                                                0, span)},
                        MakeAttrs({{"pad_width", IntArray({0, 0, 0, 0, 0,
                                                           PaddedChannels(channels) - channels,
                                                           0, 0})}}),
                        span));
    }
    KILN_ASSIGN_OR_RETURN(Expr blocked, MakeTypedCall("layout_transform", {whole_blocks},
                                                      TransformAttrs("NCHW", blocked_layout_), span));
    reblocked_[value.get()] = Converted{value, blocked};
    return blocked;
  }

  Result ConvertConv(const CallNode* call, const Expr& post) {
    const Expr& data = call->args[0];
    const Expr& weight = call->args[1];
    std::vector<int64_t> data_shape = StaticShape(data);
    std::vector<int64_t> weight_shape = StaticShape(weight);
    if (data_shape.size() != 4 || weight_shape.size() != 4 || !weight.as<ConstantNode>() ||
        !IsFloatTensor(data)) {
      return post;
    }
    const int64_t groups = IntAttr(*call->attrs, "groups");
    const int64_t channels = data_shape[1];
    const bool depthwise = groups > 1 && groups == channels && weight_shape[0] == channels &&
                           weight_shape[1] == 1;
    if (groups != 1 && !depthwise) return post;
    // The input is blocked (its channels zero-padded to whole blocks) when it already is, fills
    // blocks, or the convolution is depthwise; otherwise it is read in blocks of 1 (NCHW1c, the
    // NCHW data reshaped: an image's 3 channels). Output channels are padded to whole blocks,
    // with zero weights.
    const bool whole_blocks =
        depthwise || blocked_.count(data.get()) != 0 || channels % block_ == 0;
    const int64_t in_block = whole_blocks ? block_ : 1;
    const int64_t out_channels = PaddedChannels(weight_shape[0]);
    Expr data_blocked;
    if (whole_blocks) {
      KILN_ASSIGN_OR_RETURN(data_blocked, Blocked(data, post->span));
    } else {
      std::vector<int64_t> newshape = data_shape;
      newshape.push_back(1);
      KILN_ASSIGN_OR_RETURN(data_blocked,
                            MakeTypedCall("reshape", {data},
                                          MakeAttrs({{"newshape", IntArray(newshape)}}), post->span));
    }
    std::vector<int64_t> padded_weight = weight_shape;
    padded_weight[0] = out_channels;
    if (!depthwise && whole_blocks) padded_weight[1] = PaddedChannels(channels);
    std::string weight_layout = depthwise ? absl::StrCat("OIHW1i", block_, "o")
                                          : absl::StrCat("OIHW", in_block, "i", block_, "o");
    KILN_ASSIGN_OR_RETURN(Expr weight_blocked,
                          Pack(*weight.as<ConstantNode>()->data, "OIHW", weight_layout,
                               weight_shape, weight->span, padded_weight));
    Attrs attrs = WithAttr(call->attrs, "block", AttrValue(block_));
    if (depthwise) attrs = WithAttr(attrs, "groups", AttrValue(out_channels));
    KILN_ASSIGN_OR_RETURN(Expr blocked, MakeTypedCall("nn.conv2d_nchwc",
                                                      {data_blocked, weight_blocked}, attrs,
                                                      post->span));
    return Record(post, blocked);
  }

  // An operand of a blocked elementwise op: aligned to 4-D, its channel extent is
  // `channels` (re-blocked) or 1 (reshaped to extent-1 block axes); scalars stay.
  Result BlockedOperand(const Expr& arg, int64_t channels, const Span& span) {
    if (blocked_.count(arg.get()) != 0) return Blocked(arg, span);
    std::vector<int64_t> shape = StaticShape(arg);
    const auto* type = arg->checked_type.as<TensorTypeNode>();
    if (type == nullptr || (shape.empty() && !type->shape.empty())) {
      return absl::FailedPreconditionError("operand without a static tensor type");
    }
    if (shape.empty()) return arg;  // a scalar broadcasts in any layout
    while (shape.size() < 4) shape.insert(shape.begin(), 1);
    const auto* constant = arg.as<ConstantNode>();
    if (shape[1] == 1) {
      std::vector<int64_t> newshape = {shape[0], 1, shape[2], shape[3], 1};
      if (constant != nullptr) {
        KILN_RETURN_IF_ERROR(Charge(*constant->data));
        return NewConstant(constant->data->dtype, newshape, constant->data->bytes, arg->span);
      }
      return MakeTypedCall("reshape", {arg}, MakeAttrs({{"newshape", IntArray(newshape)}}), span);
    }
    if (shape[1] != channels) return absl::FailedPreconditionError("not a channel operand");
    // A per-channel constant (a bias) is packed here, once; zeros for padding channels.
    if (constant != nullptr) {
      std::vector<int64_t> padded = shape;
      padded[1] = PaddedChannels(shape[1]);
      std::vector<int64_t> four_d = shape;
      return Pack(*constant->data, "NCHW", blocked_layout_, four_d, arg->span, padded);
    }
    Expr four_d = arg;
    if (type->shape.size() < 4) {
      KILN_ASSIGN_OR_RETURN(four_d, MakeTypedCall("reshape", {arg},
                                                  MakeAttrs({{"newshape", IntArray(shape)}}), span));
    }
    return Blocked(four_d, span);
  }

  Result ConvertElementwise(const CallNode* call, const Expr& post,
                            const std::vector<int64_t>& shape) {
    bool any_blocked = false;
    for (const Expr& arg : call->args) any_blocked |= blocked_.count(arg.get()) != 0;
    if (!any_blocked) return post;
    std::vector<Expr> args;
    for (const Expr& arg : call->args) {
      absl::StatusOr<Expr> operand = BlockedOperand(arg, shape[1], post->span);
      if (!operand.ok()) return post;  // an operand this layout cannot express: stay NCHW
      args.push_back(*operand);
    }
    KILN_ASSIGN_OR_RETURN(Expr blocked,
                          MakeTypedCall(call->op.as<OpNode>()->name, args, call->attrs, post->span));
    return Record(post, blocked);
  }

  // x (..., K) times a constant weight (N, K) transposed: over packed panels (MultiplyByPanels)
  // when that pays, else nn.matmul with the weight stored (K, N), transposed here: the vector
  // lanes of the output's columns then read contiguous weights instead of gathering one per row.
  Result ConvertDense(const CallNode* call, const Expr& post) {
    const Expr& weight = call->args[1];
    const auto* constant = weight.as<ConstantNode>();
    std::vector<int64_t> weight_shape = StaticShape(weight);
    const auto* data_type = call->args[0]->checked_type.as<TensorTypeNode>();
    if (constant == nullptr || weight_shape.size() != 2 || data_type == nullptr ||
        data_type->shape.size() < 2 || !IsFloatTensor(post)) {
      return post;
    }
    std::vector<int64_t> data_shape = StaticShape(call->args[0]);
    int64_t rows = 1;
    for (size_t d = 0; d + 1 < data_shape.size(); ++d) rows *= data_shape[d];
    if (!data_shape.empty() && PanelsPay(rows, weight_shape[0]) && !StaticShape(post).empty()) {
      return MultiplyByPanels(call, post, *constant, "NK", weight_shape, rows);
    }
    KILN_ASSIGN_OR_RETURN(Expr transposed,
                          Pack(*constant->data, "NK", "KN", weight_shape, weight->span));
    KILN_ASSIGN_OR_RETURN(Expr product, MakeTypedCall("nn.matmul", {call->args[0], transposed},
                                                      nullptr, post->span));
    return WithFields(product, ExprFields{post->span, product->checked_type, post->virtual_device});
  }

  // x (..., K) times a constant weight (K, N) (ONNX MatMul: a transformer's projections and
  // feed-forward layers): over packed panels (MultiplyByPanels) when that pays.
  Result ConvertMatmul(const CallNode* call, const Expr& post) {
    const auto* constant = call->args[1].as<ConstantNode>();
    std::vector<int64_t> weight_shape = StaticShape(call->args[1]);
    std::vector<int64_t> data_shape = StaticShape(call->args[0]);
    // transpose_a / transpose_b (a Gemm's transA, a MatMul gradient's B transposed) read the
    // operands otherwise: left as they are.
    if (constant == nullptr || weight_shape.size() != 2 || data_shape.empty() ||
        !IsFloatTensor(post) || StaticShape(post).empty() ||
        BoolAttr(call->attrs, "transpose_a", false) || BoolAttr(call->attrs, "transpose_b", false)) {
      return post;
    }
    int64_t rows = 1;
    for (size_t d = 0; d + 1 < data_shape.size(); ++d) rows *= data_shape[d];
    if (!PanelsPay(rows, weight_shape[1])) return post;
    return MultiplyByPanels(call, post, *constant, "KN", weight_shape, rows);
  }

  // Whether x (rows, K) times a constant weight of n outputs runs over packed panels, n rounded
  // up to whole tiles of panels: at one row (a classifier at batch 1, whose speed is the
  // memory's) once n fills a panel (at most 4x the work in zero columns); at more rows once n
  // fills a tile.
  bool PanelsPay(int64_t rows, int64_t n) const {
    if (block_ <= 1 || rows < 1) return false;
    return n >= (rows == 1 ? block_ : block_ * kPanelsPerTile);
  }

  // x (rows, K) times a constant weight of N outputs, stored `weight_layout` ("NK", a Gemm's
  // transposed B, or "KN", a MatMul's B) in `shape`. The weight is packed (N/b, K, b), one
  // contiguous K x b panel per block of b outputs, with N rounded up to whole tiles of
  // kPanelsPerTile blocks by zero columns: the product nn.matmul(x, panels) is (N/b, rows, b),
  // each reduce step loading one vector from each of a register tile's panels (streams the
  // prefetcher follows), then reordered to (rows, N) and sliced back to N. Unpacked, a weight row
  // is N floats apart from the next: at N = 1024 (4 KB) every K step of a tile's column strip maps
  // to the same L1 and L2 sets and the strip streams from L3 once per row tile (a transformer's
  // feed-forward matmul at 40-57% of peak on a Zen 3 core; over panels 60-65%, the encoder 21.8
  // -> 15.1 ms). The reorder leaves the bias and activation in a kernel of their own (one pass over
  // the output, a tenth of the product's time there).
  Result MultiplyByPanels(const CallNode* call, const Expr& post, const ConstantNode& weight,
                          const std::string& weight_layout, const std::vector<int64_t>& shape,
                          int64_t rows) {
    const bool kn = weight_layout == "KN";
    const int64_t n = kn ? shape[1] : shape[0], k = kn ? shape[0] : shape[1];
    const int64_t tile = block_ * kPanelsPerTile;
    const int64_t padded_n = (n + tile - 1) / tile * tile;
    const Span& span = post->span;
    std::vector<int64_t> padded = kn ? std::vector<int64_t>{k, padded_n}
                                     : std::vector<int64_t>{padded_n, k};
    KILN_ASSIGN_OR_RETURN(Expr panels,
                          Pack(*weight.data, weight_layout, absl::StrCat("NK", block_, "n"), shape,
                               call->args[1]->span, padded));
    KILN_ASSIGN_OR_RETURN(Expr row, MakeTypedCall("reshape", {call->args[0]},
                                                  MakeAttrs({{"newshape", IntArray({rows, k})}}),
                                                  span));
    KILN_ASSIGN_OR_RETURN(Expr product, MakeTypedCall("nn.matmul", {row, panels}, nullptr, span));
    KILN_ASSIGN_OR_RETURN(
        Expr reordered,
        MakeTypedCall("transpose", {product}, MakeAttrs({{"axes", IntArray({1, 0, 2})}}), span));
    KILN_ASSIGN_OR_RETURN(Expr flat, MakeTypedCall("reshape", {reordered},
                                                   MakeAttrs({{"newshape", IntArray({rows, padded_n})}}),
                                                   span));
    if (padded_n != n) {
      KILN_ASSIGN_OR_RETURN(flat, MakeTypedCall("strided_slice", {flat},
                                                MakeAttrs({{"begin", IntArray({0})},
                                                           {"end", IntArray({n})},
                                                           {"axes", IntArray({1})}}),
                                                span));
    }
    std::vector<int64_t> out_shape = StaticShape(post);
    KILN_ASSIGN_OR_RETURN(Expr result, MakeTypedCall("reshape", {flat},
                                                     MakeAttrs({{"newshape", IntArray(out_shape)}}),
                                                     span));
    return WithFields(result, ExprFields{post->span, result->checked_type, post->virtual_device});
  }

  // 2-D pooling of (N, C/b, H, W, b) is 3-D pooling over (H, W, b) with a window of extent 1,
  // stride 1 and no padding along b: the same windows, the same divisors.
  Result ConvertPool(const CallNode* call, const Expr& post) {
    auto it = blocked_.find(call->args[0].get());
    if (it == blocked_.end()) return post;
    auto extend = [&](const char* key, int64_t value) {
      std::vector<int64_t> values = IntArrayAttr(*call->attrs, key);
      values.push_back(value);
      return IntArray(values);
    };
    std::vector<int64_t> padding = IntArrayAttr(*call->attrs, "padding");
    if (padding.size() == 2) padding.insert(padding.end(), padding.begin(), padding.end());
    padding = {padding[0], padding[1], 0, padding[2], padding[3], 0};
    Attrs attrs = WithAttr(call->attrs, "pool_size", extend("pool_size", 1));
    attrs = WithAttr(attrs, "strides", extend("strides", 1));
    attrs = WithAttr(attrs, "dilation", extend("dilation", 1));
    attrs = WithAttr(attrs, "padding", IntArray(padding));
    const bool is_max = call->op.as<OpNode>()->name == "nn.max_pool2d";
    KILN_ASSIGN_OR_RETURN(Expr pooled, MakeTypedCall(is_max ? "nn.max_pool3d" : "nn.avg_pool3d",
                                                     {it->second.blocked}, attrs, post->span));
    return Record(post, pooled);
  }

  // concatenate is variadic: its arguments are the pieces.
  Result ConvertConcat(const CallNode* call, const Expr& post) {
    int64_t axis = IntAttr(*call->attrs, "axis");
    if (axis != 1 && axis != -3) return post;
    bool any_blocked = false;
    for (const Expr& piece : call->args) {
      std::vector<int64_t> shape = StaticShape(piece);
      if (shape.size() != 4 || shape[1] % block_ != 0) return post;
      any_blocked |= blocked_.count(piece.get()) != 0;
    }
    if (!any_blocked) return post;
    std::vector<Expr> pieces;
    for (const Expr& piece : call->args) {
      KILN_ASSIGN_OR_RETURN(Expr blocked, Blocked(piece, post->span));
      pieces.push_back(blocked);
    }
    KILN_ASSIGN_OR_RETURN(
        Expr blocked,
        MakeTypedCall("concatenate", pieces, MakeAttrs({{"axis", AttrValue(int64_t{1})}}), post->span));
    return Record(post, blocked);
  }

  const int64_t block_;
  const std::string blocked_layout_;
  CompileBudget* const budget_;  // may be null
  // Keyed by the NCHW view's node (kept alive by the entry).
  std::unordered_map<const ExprNode*, Converted> blocked_;
  // NCHW values made blocked for a converted reader, so each is transformed once.
  std::unordered_map<const ExprNode*, Converted> reblocked_;
};

}  // namespace

Pass ConvertLayout(int64_t block) {
  return CreateRewriterPass(
      [block](const Function&, const IRModule&, PassContext& context) {
        return LayoutConverter(block, context.budget());
      },
      PassInfo{"ConvertLayout", 3, {"InferType"}, PassStage::kGraph});
}

}  // namespace kiln::transform
