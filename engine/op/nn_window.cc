// Sliding-window operators in NC[D]HW layout: convolutions and transposed
// convolutions (1-D to 3-D), max and average pooling, and global pooling.
// One helper does the window arithmetic for all of them, so every window op
// reports a kernel larger than its padded input the same way, and symbolic
// batch and spatial dims stay symbolic.
#include <functional>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "engine/op/nn_registration.h"
#include "engine/op/type_relations.h"
#include "engine/support/status_macros.h"

namespace kiln {
namespace {

using AttrCheck = std::function<std::string(const AttrValue&)>;

// "(N, C, H, W)" for n = 2: the layout named in rank errors. Weights are
// (O, I, kH, kW) for convolutions and (I, O, kH, kW) when transposed.
enum class Layout { kData, kWeight, kTransposedWeight };
std::string LayoutName(int n, Layout layout = Layout::kData) {
  static const char* const kSpatial[3][3] = {{"W"}, {"H", "W"}, {"D", "H", "W"}};
  std::vector<std::string> parts;
  switch (layout) {
    case Layout::kData:
      parts = {"N", "C"};
      break;
    case Layout::kWeight:
      parts = {"O", "I"};
      break;
    case Layout::kTransposedWeight:
      parts = {"I", "O"};
      break;
  }
  for (int i = 0; i < n; ++i) {
    parts.push_back(absl::StrCat(layout == Layout::kData ? "" : "k", kSpatial[n - 1][i]));
  }
  return absl::StrCat("(", absl::StrJoin(parts, ", "), ")");
}

// An int array of exactly `n` elements, each >= `min_value`.
AttrCheck IntsOfLength(size_t n, int64_t min_value) {
  return [n, min_value](const AttrValue& value) -> std::string {
    const auto& values = value.get<AttrValue::Array>();
    if (values.size() != n) return absl::StrCat("must have ", n, " elements, got ", values.size());
    for (const AttrValue& v : values) {
      if (v.get<int64_t>() < min_value) return absl::StrCat("every element must be >= ", min_value);
    }
    return "";
  };
}

// Padding: n values (the same at both ends) or 2n (all begins, then all ends).
AttrCheck PaddingCheck(size_t n) {
  return [n](const AttrValue& value) -> std::string {
    const auto& values = value.get<AttrValue::Array>();
    if (values.size() != n && values.size() != 2 * n) {
      return absl::StrCat("must have ", n, " or ", 2 * n, " elements (begins then ends), got ",
                          values.size());
    }
    for (const AttrValue& v : values) {
      if (v.get<int64_t>() < 0) return "every element must be >= 0";
    }
    return "";
  };
}

// An optional int array: empty, or n positive elements.
AttrCheck OptionalIntsOfLength(size_t n) {
  return [n](const AttrValue& value) -> std::string {
    if (value.get<AttrValue::Array>().empty()) return "";
    return IntsOfLength(n, 1)(value);
  };
}

AttrValue Repeat(int64_t value, int n) {
  return IntArray(std::vector<int64_t>(static_cast<size_t>(n), value));
}

struct Padding {
  std::vector<int64_t> begin, end;
};

Padding ReadPadding(const AttrsNode& attrs, int n) {
  std::vector<int64_t> values = IntArrayAttr(attrs, "padding");
  Padding p;
  p.begin.assign(values.begin(), values.begin() + n);
  if (values.size() == static_cast<size_t>(2 * n)) {
    p.end.assign(values.begin() + n, values.end());
  } else {
    p.end = p.begin;
  }
  return p;
}

std::string Extents(const std::vector<int64_t>& values) {
  std::vector<std::string> parts;
  for (int64_t v : values) parts.push_back(v < 0 ? "?" : absl::StrCat(v));
  return absl::StrJoin(parts, "x");
}

// A sliding window over the spatial dims. Kernel extents are -1 when symbolic.
struct Window {
  std::vector<int64_t> kernel, strides, dilation;
  Padding padding;
  bool ceil_mode = false;
};

// The output spatial dims of `window` sliding over `input`, or an error when
// the (dilated) window does not fit in the padded input along a static dim.
absl::StatusOr<std::vector<Dim>> SlideWindow(const std::vector<Dim>& input, const Window& window,
                                             const char* what) {
  size_t n = input.size();
  std::vector<Dim> out(n);
  std::vector<int64_t> effective(n), padded(n);
  bool too_large = false, dilated = false;
  for (size_t i = 0; i < n; ++i) {
    int64_t k = window.kernel[i];
    effective[i] = k < 0 ? -1 : (k - 1) * window.dilation[i] + 1;
    dilated |= window.dilation[i] != 1;
    padded[i] = input[i].is_static()
                    ? input[i].value + window.padding.begin[i] + window.padding.end[i]
                    : -1;
    if (effective[i] < 0 || padded[i] < 0) {
      out[i] = Dim::Symbolic();
      continue;
    }
    if (effective[i] > padded[i]) {
      too_large = true;
      continue;
    }
    int64_t s = window.strides[i];
    int64_t span = padded[i] - effective[i];
    int64_t extent = (window.ceil_mode ? (span + s - 1) / s : span / s) + 1;
    // With ceil_mode, a last window starting in the end padding is dropped.
    if (window.ceil_mode && (extent - 1) * s >= input[i].value + window.padding.begin[i]) {
      --extent;
    }
    out[i] = Dim::Static(extent);
  }
  if (too_large) {
    std::string kernel = Extents(effective);
    if (dilated) {
      kernel = absl::StrCat(kernel, " (", Extents(window.kernel), " with dilation ",
                            Extents(window.dilation), ")");
    }
    return absl::InvalidArgumentError(
        absl::StrCat(what, " ", kernel, " is larger than the padded input ", Extents(padded)));
  }
  return out;
}

absl::StatusOr<const TensorTypeNode*> DataArg(const TypeRelationInput& in, int n) {
  KILN_ASSIGN_OR_RETURN(const TensorTypeNode* data, TensorArg(in, 0));
  if (data->shape.size() != static_cast<size_t>(n + 2)) {
    return absl::InvalidArgumentError(absl::StrCat("expected a ", n + 2, "-D input ", LayoutName(n),
                                                   ", got ", data->shape.size(), "-D ",
                                                   ShapeToString(data->shape)));
  }
  return data;
}

absl::Status CheckFloat(const TensorTypeNode* t, const char* what) {
  if (IsFloat(t->dtype)) return absl::OkStatus();
  return absl::InvalidArgumentError(
      absl::StrCat(what, " has dtype ", DataTypeName(t->dtype), ", expected a float dtype"));
}

absl::Status CheckNumeric(const TensorTypeNode* t, const char* what) {
  if (t->dtype != DataType::kBool) return absl::OkStatus();
  return absl::InvalidArgumentError(
      absl::StrCat(what, " has dtype bool, expected a numeric dtype"));
}

std::vector<Dim> Spatial(const std::vector<Dim>& shape) {
  return std::vector<Dim>(shape.begin() + 2, shape.end());
}

// Weight checks shared by conv and conv_transpose: rank, dtype, kernel_size.
absl::StatusOr<const TensorTypeNode*> WeightArg(const TypeRelationInput& in, int n,
                                                const TensorTypeNode* data,
                                                const std::string& layout) {
  KILN_ASSIGN_OR_RETURN(const TensorTypeNode* weight, TensorArg(in, 1));
  if (weight->shape.size() != static_cast<size_t>(n + 2)) {
    return absl::InvalidArgumentError(absl::StrCat("expected a ", n + 2, "-D weight ", layout,
                                                   ", got ", weight->shape.size(), "-D ",
                                                   ShapeToString(weight->shape)));
  }
  if (weight->dtype != data->dtype) {
    return absl::InvalidArgumentError(absl::StrCat("weight has dtype ", DataTypeName(weight->dtype),
                                                   ", expected ", DataTypeName(data->dtype),
                                                   " like the input"));
  }
  std::vector<int64_t> kernel_size = IntArrayAttr(in.attrs, "kernel_size");
  for (size_t i = 0; i < kernel_size.size(); ++i) {
    const Dim& k = weight->shape[2 + i];
    if (k.is_static() && k.value != kernel_size[i]) {
      return absl::InvalidArgumentError(absl::StrCat("attribute kernel_size ", Extents(kernel_size),
                                                     " does not match the weight's kernel ",
                                                     ShapeToString(Spatial(weight->shape))));
    }
  }
  return weight;
}

Window ReadWindow(const AttrsNode& attrs, int n, const std::vector<Dim>& kernel_dims) {
  Window w;
  for (const Dim& k : kernel_dims) w.kernel.push_back(k.is_static() ? k.value : -1);
  w.strides = IntArrayAttr(attrs, "strides");
  w.dilation = IntArrayAttr(attrs, "dilation");
  w.padding = ReadPadding(attrs, n);
  return w;
}

absl::Status CheckChannelsAttr(const AttrsNode& attrs, const Dim& channels) {
  int64_t expected = IntAttr(attrs, "channels");
  if (expected > 0 && channels.is_static() && channels.value != expected) {
    return absl::InvalidArgumentError(absl::StrCat("attribute channels ", expected,
                                                   " does not match the weight's ", channels.value,
                                                   " output channels"));
  }
  return absl::OkStatus();
}

// data (N, C, *spatial), weight (O, C / groups, *kernel) -> (N, O, *out).
absl::StatusOr<Type> ConvRelation(const TypeRelationInput& in, int n) {
  KILN_ASSIGN_OR_RETURN(const TensorTypeNode* data, DataArg(in, n));
  KILN_RETURN_IF_ERROR(CheckFloat(data, "input"));
  KILN_ASSIGN_OR_RETURN(const TensorTypeNode* weight,
                        WeightArg(in, n, data, LayoutName(n, Layout::kWeight)));
  int64_t groups = IntAttr(in.attrs, "groups");
  const Dim& c = data->shape[1];
  const Dim& o = weight->shape[0];
  const Dim& i = weight->shape[1];
  if (c.is_static() && c.value % groups != 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("input channels ", c.value, " are not divisible by groups ", groups));
  }
  if (o.is_static() && o.value % groups != 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        "output channels ", o.value, " (weight dim 0) are not divisible by groups ", groups));
  }
  if (c.is_static() && i.is_static() && c.value / groups != i.value) {
    return absl::InvalidArgumentError(
        absl::StrCat("weight has ", i.value, " input channels per group (dim 1), expected ",
                     c.value / groups, " = ", c.value, " input channels / ", groups, " groups"));
  }
  KILN_RETURN_IF_ERROR(CheckChannelsAttr(in.attrs, o));
  Window window = ReadWindow(in.attrs, n, Spatial(weight->shape));
  KILN_ASSIGN_OR_RETURN(std::vector<Dim> spatial,
                        SlideWindow(Spatial(data->shape), window, "kernel"));
  std::vector<Dim> shape = {data->shape[0], o};
  shape.insert(shape.end(), spatial.begin(), spatial.end());
  return Type(MakeTensorType(std::move(shape), data->dtype));
}

// The blocked 2-D convolution (nn.conv2d_nchwc): data (N, C/i, H, W, i), weight
// (O/b, C/i, kH, kW, i, b) when groups = 1 (layout OIHW{i}i{b}o; i = 1 reads NCHW data
// reshaped, a network's 3-channel stem) or (O/b, 1, kH, kW, 1, b) when depthwise
// (groups = C = O, i = b, layout OIHW1i{b}o), result (N, O/b, OH, OW, b); b is the
// attribute `block`. ConvertLayout makes it from nn.conv2d; other group counts stay NCHW.
absl::StatusOr<Type> BlockedConvRelation(const TypeRelationInput& in) {
  KILN_ASSIGN_OR_RETURN(const TensorTypeNode* data, TensorArg(in, 0));
  KILN_ASSIGN_OR_RETURN(const TensorTypeNode* weight, TensorArg(in, 1));
  KILN_RETURN_IF_ERROR(CheckFloat(data, "input"));
  const int64_t block = IntAttr(in.attrs, "block");
  const int64_t groups = IntAttr(in.attrs, "groups");
  if (data->shape.size() != 5 || !data->shape[4].is_static()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "expected a 5-D input (N, C/i, H, W, i), got ", ShapeToString(data->shape)));
  }
  const int64_t in_block = data->shape[4].value;
  if (weight->dtype != data->dtype) {
    return absl::InvalidArgumentError(absl::StrCat("weight has dtype ", DataTypeName(weight->dtype),
                                                   ", expected ", DataTypeName(data->dtype),
                                                   " like the input"));
  }
  for (const Dim& d : weight->shape) {
    if (!d.is_static()) {
      return absl::InvalidArgumentError(
          absl::StrCat("weight shape ", ShapeToString(weight->shape), " must be static"));
    }
  }
  if (weight->shape.size() != 6 || weight->shape[5].value != block) {
    return absl::InvalidArgumentError(absl::StrCat("expected a 6-D weight (O/", block,
                                                   ", C/i, kH, kW, i, ", block, "), got ",
                                                   ShapeToString(weight->shape)));
  }
  const Dim& c_blocks = data->shape[1];
  if (groups > 1) {
    if (!c_blocks.is_static() || in_block != block || groups != c_blocks.value * block ||
        weight->shape[0].value != c_blocks.value || weight->shape[1].value != 1 ||
        weight->shape[4].value != 1) {
      return absl::InvalidArgumentError(absl::StrCat(
          "groups ", groups, " must be 1 or the channel count (depthwise: input (N, C/", block,
          ", H, W, ", block, "), weight (C/", block, ", 1, kH, kW, 1, ", block, ")); got input ",
          ShapeToString(data->shape), ", weight ", ShapeToString(weight->shape)));
    }
  } else if (weight->shape[4].value != in_block ||
             (c_blocks.is_static() && weight->shape[1].value != c_blocks.value)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "weight ", ShapeToString(weight->shape), " does not match input ",
        ShapeToString(data->shape), ": expected (O/", block, ", C/", in_block, ", kH, kW, ",
        in_block, ", ", block, ")"));
  }
  std::vector<Dim> kernel = {weight->shape[2], weight->shape[3]};
  Window window = ReadWindow(in.attrs, 2, kernel);
  KILN_ASSIGN_OR_RETURN(std::vector<Dim> spatial,
                        SlideWindow({data->shape[2], data->shape[3]}, window, "kernel"));
  return Type(MakeTensorType({data->shape[0], weight->shape[0], spatial[0], spatial[1],
                              Dim::Static(block)},
                             data->dtype));
}

// data (N, C, *spatial), weight (C, O / groups, *kernel) -> (N, O, *out) with
// out = (in - 1) * stride - pad_begin - pad_end + dilated kernel + output_padding.
absl::StatusOr<Type> ConvTransposeRelation(const TypeRelationInput& in, int n) {
  KILN_ASSIGN_OR_RETURN(const TensorTypeNode* data, DataArg(in, n));
  KILN_RETURN_IF_ERROR(CheckFloat(data, "input"));
  KILN_ASSIGN_OR_RETURN(const TensorTypeNode* weight,
                        WeightArg(in, n, data, LayoutName(n, Layout::kTransposedWeight)));
  int64_t groups = IntAttr(in.attrs, "groups");
  const Dim& c = data->shape[1];
  const Dim& wc = weight->shape[0];
  if (c.is_static() && c.value % groups != 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("input channels ", c.value, " are not divisible by groups ", groups));
  }
  if (c.is_static() && wc.is_static() && c.value != wc.value) {
    return absl::InvalidArgumentError(absl::StrCat(
        "weight has ", wc.value, " input channels (dim 0), expected ", c.value, " like the input"));
  }
  Dim o =
      weight->shape[1].is_static() ? Dim::Static(weight->shape[1].value * groups) : Dim::Symbolic();
  KILN_RETURN_IF_ERROR(CheckChannelsAttr(in.attrs, o));
  Window window = ReadWindow(in.attrs, n, Spatial(weight->shape));
  std::vector<int64_t> output_padding = IntArrayAttr(in.attrs, "output_padding");
  std::vector<Dim> shape = {data->shape[0], o};
  for (int d = 0; d < n; ++d) {
    const Dim& x = data->shape[2 + d];
    int64_t k = window.kernel[d];
    if (!x.is_static() || k < 0) {
      shape.push_back(Dim::Symbolic());
      continue;
    }
    int64_t extent = (x.value - 1) * window.strides[d] - window.padding.begin[d] -
                     window.padding.end[d] + (k - 1) * window.dilation[d] + 1 + output_padding[d];
    if (extent <= 0) {
      return absl::InvalidArgumentError(
          absl::StrCat("output spatial dim ", d, " would have extent ", extent, " (input ", x.value,
                       ", stride ", window.strides[d], ", kernel ", k, ", dilation ",
                       window.dilation[d], ", padding ", window.padding.begin[d], "+",
                       window.padding.end[d], ", output_padding ", output_padding[d], ")"));
    }
    shape.push_back(Dim::Static(extent));
  }
  return Type(MakeTensorType(std::move(shape), data->dtype));
}

// data (N, C, *spatial) -> (N, C, *out).
absl::StatusOr<Type> PoolRelation(const TypeRelationInput& in, int n, bool is_max) {
  KILN_ASSIGN_OR_RETURN(const TensorTypeNode* data, DataArg(in, n));
  if (is_max) {
    KILN_RETURN_IF_ERROR(CheckNumeric(data, "input"));
  } else {
    KILN_RETURN_IF_ERROR(CheckFloat(data, "input"));
  }
  Window window;
  window.kernel = IntArrayAttr(in.attrs, "pool_size");
  window.strides = IntArrayAttr(in.attrs, "strides");
  window.dilation = IntArrayAttr(in.attrs, "dilation");
  window.padding = ReadPadding(in.attrs, n);
  window.ceil_mode = BoolAttr(in.attrs, "ceil_mode");
  for (int d = 0; d < n; ++d) {
    if (window.padding.begin[d] >= window.kernel[d] || window.padding.end[d] >= window.kernel[d]) {
      return absl::InvalidArgumentError(
          absl::StrCat("padding ", window.padding.begin[d], "+", window.padding.end[d],
                       " of spatial dim ", d, " must be smaller than the pool window ",
                       window.kernel[d], " (a window could see only padding)"));
    }
  }
  KILN_ASSIGN_OR_RETURN(std::vector<Dim> spatial,
                        SlideWindow(Spatial(data->shape), window, "pool window"));
  std::vector<Dim> shape = {data->shape[0], data->shape[1]};
  shape.insert(shape.end(), spatial.begin(), spatial.end());
  return Type(MakeTensorType(std::move(shape), data->dtype));
}

// data (N, C, *spatial) -> (N, C, 1, ...).
absl::StatusOr<Type> GlobalPoolRelation(const TypeRelationInput& in, int n, bool is_max) {
  KILN_ASSIGN_OR_RETURN(const TensorTypeNode* data, DataArg(in, n));
  if (is_max) {
    KILN_RETURN_IF_ERROR(CheckNumeric(data, "input"));
  } else {
    KILN_RETURN_IF_ERROR(CheckFloat(data, "input"));
  }
  std::vector<Dim> shape = {data->shape[0], data->shape[1]};
  shape.insert(shape.end(), n, Dim::Static(1));
  return Type(MakeTensorType(std::move(shape), data->dtype));
}

// Attributes every convolution has.
std::vector<AttrField> ConvAttrs(int n) {
  return {
      {"strides", AttrKind::kIntArray, Repeat(1, n), "step of the window per spatial dim",
       IntsOfLength(n, 1)},
      {"padding", AttrKind::kIntArray, Repeat(0, n),
       "implicit zeros: n values for both ends, or 2n (all begins, then all ends)",
       PaddingCheck(n)},
      {"dilation", AttrKind::kIntArray, Repeat(1, n), "spacing of kernel elements",
       IntsOfLength(n, 1)},
      {"groups", AttrKind::kInt, AttrValue(1), "channel groups (depthwise: groups = channels)",
       CheckPositive},
      {"channels", AttrKind::kInt, AttrValue(0),
       "output channels when known (0: from the weight), checked against the weight",
       CheckNonNegative},
      {"kernel_size", AttrKind::kIntArray, IntArray({}),
       "kernel extents when known (empty: from the weight), checked against the weight",
       OptionalIntsOfLength(n)},
  };
}

void RegisterConv(OpRegistry& registry, int n) {
  OpEntry entry;
  entry.name = absl::StrCat("nn.conv", n, "d");
  entry.summary = absl::StrCat(n, "-D convolution: data ", LayoutName(n), ", weight ",
                               LayoutName(n, Layout::kWeight));
  entry.min_args = entry.max_args = 2;
  entry.attrs = ConvAttrs(n);
  entry.relation = [n](const TypeRelationInput& in) { return ConvRelation(in, n); };
  entry.pattern = OpPattern::kOutElementwiseFusable;
  entry.scale_axis = ScaleAxisRule::kConvLayer;
  registry.Register(std::move(entry));
}

void RegisterBlockedConv(OpRegistry& registry) {
  OpEntry entry;
  entry.name = "nn.conv2d_nchwc";
  entry.summary =
      "2-D convolution in blocked layout: data NCHW{i}c, weight OIHW{i}i{b}o (depthwise "
      "OIHW1i{b}o), result NCHW{b}c (made by ConvertLayout)";
  entry.min_args = entry.max_args = 2;
  entry.attrs = ConvAttrs(2);
  entry.attrs.push_back(
      {"block", AttrKind::kInt, std::nullopt, "output channels per block (b)", CheckPositive});
  entry.relation = BlockedConvRelation;
  entry.pattern = OpPattern::kOutElementwiseFusable;
  registry.Register(std::move(entry));
}

void RegisterConvTranspose(OpRegistry& registry, int n) {
  OpEntry entry;
  entry.name = absl::StrCat("nn.conv", n, "d_transpose");
  entry.summary = absl::StrCat(n, "-D transposed convolution (the gradient of conv", n,
                               "d with respect to its input): weight ",
                               LayoutName(n, Layout::kTransposedWeight), ", O per group");
  entry.min_args = entry.max_args = 2;
  entry.attrs = ConvAttrs(n);
  entry.attrs.push_back({"output_padding", AttrKind::kIntArray, Repeat(0, n),
                         "extra elements at the end of each spatial output dim",
                         IntsOfLength(n, 0)});
  entry.relation = [n](const TypeRelationInput& in) { return ConvTransposeRelation(in, n); };
  entry.pattern = OpPattern::kOutElementwiseFusable;
  registry.Register(std::move(entry));
}

void RegisterPool(OpRegistry& registry, int n, bool is_max) {
  OpEntry entry;
  entry.name = absl::StrCat("nn.", is_max ? "max" : "avg", "_pool", n, "d");
  entry.summary =
      absl::StrCat(n, "-D ", is_max ? "max" : "average", " pooling over ", LayoutName(n));
  entry.attrs = {
      {"pool_size", AttrKind::kIntArray, std::nullopt, "window extents", IntsOfLength(n, 1)},
      {"strides", AttrKind::kIntArray, Repeat(1, n), "step of the window", IntsOfLength(n, 1)},
      {"dilation", AttrKind::kIntArray, Repeat(1, n), "spacing of window elements",
       IntsOfLength(n, 1)},
      {"padding", AttrKind::kIntArray, Repeat(0, n),
       "n values for both ends, or 2n (all begins, then all ends)", PaddingCheck(n)},
      {"ceil_mode", AttrKind::kBool, AttrValue(false),
       "round the output extent up (a window starting in the end padding is dropped)", nullptr},
  };
  if (!is_max) {
    entry.attrs.push_back({"count_include_pad", AttrKind::kBool, AttrValue(false),
                           "padding counts in the divisor", nullptr});
  }
  entry.relation = [n, is_max](const TypeRelationInput& in) { return PoolRelation(in, n, is_max); };
  entry.pattern = OpPattern::kOutElementwiseFusable;
  registry.Register(std::move(entry));
}

void RegisterGlobalPool(OpRegistry& registry, int n, bool is_max) {
  OpEntry entry;
  entry.name = absl::StrCat("nn.global_", is_max ? "max" : "avg", "_pool", n, "d");
  entry.summary =
      absl::StrCat(is_max ? "maximum" : "mean", " over all ", n, " spatial dims; they become 1");
  entry.relation = [n, is_max](const TypeRelationInput& in) {
    return GlobalPoolRelation(in, n, is_max);
  };
  entry.pattern = OpPattern::kOutElementwiseFusable;
  registry.Register(std::move(entry));
}

}  // namespace

void RegisterWindowOps(OpRegistry& registry) {
  RegisterBlockedConv(registry);
  for (int n = 1; n <= 3; ++n) {
    RegisterConv(registry, n);
    RegisterConvTranspose(registry, n);
    for (bool is_max : {true, false}) {
      RegisterPool(registry, n, is_max);
      RegisterGlobalPool(registry, n, is_max);
    }
  }
}

}  // namespace kiln
