// The random module generator: a budgeted, scope-aware walk that builds
// expressions bottom-up and reuses earlier ones to make a DAG.
#include "tests/unit/roundtrip/random_graph.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <random>
#include <string>
#include <vector>

namespace kiln::test {

namespace {

constexpr const char* kOps[] = {"add",     "multiply",       "nn.conv2d",
                                "nn.relu", "image.resize2d", "concatenate",
                                "split",   "nn.batch_norm",  "qnn.op.requantize"};
constexpr const char* kAttrKeys[] = {"axis",    "strides",  "padding",   "data_layout",
                                     "alpha",   "keepdims", "out_dtype", "new_shape",
                                     "indices", "epsilon",  "mode",      "name"};
// Includes hints the printer must sanitize or make unique.
constexpr const char* kVarNames[] = {"x",      "y",  "data", "w", "conv1.weight", "layer1.0.conv",
                                     "x",      "_t", "0abc", "",  "with space",   "a-b",
                                     "bias_1", "x_1"};
constexpr const char* kBareSources[] = {"conv1", "layer1.0/relu", "a-b",
                                        "input", "node_7",        "x.y-z/w"};
constexpr const char* kQuotedSources[] = {"onnx::Conv_12",  "with space",  "quote\"s",
                                          "star*/slash",    "back\\slash", "caf\xc3\xa9",
                                          "tab\tnew\nline", "\x01\x7f",    ""};
constexpr const char* kStrings[] = {
    "NCHW", "",  "with \"quotes\"", "back\\slash", "new\nline\ttab", "\x01\x02", "caf\xc3\xa9",
    "*/",   "//"};
constexpr const char* kDimNames[] = {"N", "batch", "seq_len"};
constexpr const char* kDeviceTypes[] = {"cpu", "cuda", "vulkan"};
constexpr const char* kTargets[] = {"llvm", "llvm -mcpu=znver4", "cuda -arch=sm_80"};
constexpr const char* kScopes[] = {"global", "shared", "weird \"scope\""};
constexpr const char* kFunctionNames[] = {"helper", "fused.layer", "f_2", "other"};

// Dtypes whose scalars print inline (everything else goes to the metadata table).
bool PrintsInline(DataType dtype) {
  return dtype == DataType::kFloat32 || dtype == DataType::kFloat64 || dtype == DataType::kInt32 ||
         dtype == DataType::kInt64 || dtype == DataType::kBool;
}

class Generator {
 public:
  Generator(uint64_t seed, const RandomGraphOptions& options) : rng_(seed), options_(options) {}

  IRModule Run() {
    int num_functions = Int(1, std::max(1, options_.max_functions));
    globals_.push_back(MakeGlobalVar("main"));
    for (int i = 1; i < num_functions; ++i)
      globals_.push_back(MakeGlobalVar(kFunctionNames[i - 1]));
    std::vector<IRModuleNode::Entry> entries;
    for (const GlobalVar& global : globals_) {
      budget_ = options_.max_nodes_per_function;
      pools_.clear();
      entries.emplace_back(global, NewFunction(0));
    }
    Attrs attrs = Chance(0.3) ? RandomAttrs(false) : Attrs();
    return MakeModule(std::move(entries), std::move(attrs));
  }

 private:
  int Int(int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng_); }
  bool Chance(double p) { return std::bernoulli_distribution(p)(rng_); }
  template <typename T, size_t N>
  const T& Pick(const T (&items)[N]) {
    return items[Int(0, static_cast<int>(N) - 1)];
  }

  // --- Spans, devices, types, attributes ---

  Span PlainSpan() {
    int kind = Int(0, 9);
    SourceName source = MakeSourceName(kind < 6 ? Pick(kBareSources) : Pick(kQuotedSources));
    if (Chance(0.3)) {
      return MakeSpan(source, Int(0, 5000), Int(0, 200), Int(0, 5000), Int(0, 200));
    }
    return MakeSpan(source);
  }

  Span RandomSpan() {
    if (!options_.spans || Chance(0.35)) return Span();
    if (Chance(0.15)) {
      std::vector<Span> spans;
      int n = Int(2, 3);
      for (int i = 0; i < n; ++i) spans.push_back(PlainSpan());
      return MakeSequentialSpan(spans);  // duplicates collapse, as the IR's rule says
    }
    return PlainSpan();
  }

  VirtualDevice RandomDevice() {
    if (!options_.virtual_devices || Chance(0.7)) return VirtualDevice();
    if (Chance(0.1)) return MakeVirtualDevice("", -1, "", "");  // unconstrained, never printed
    return MakeVirtualDevice(Chance(0.7) ? Pick(kDeviceTypes) : "", Chance(0.5) ? Int(0, 3) : -1,
                             Chance(0.4) ? Pick(kTargets) : "", Chance(0.3) ? Pick(kScopes) : "");
  }

  Dim RandomDim() {
    int r = Int(0, 99);
    if (r < 70) return Dim::Static(Int(0, 300));
    if (r < 85) return Dim::Symbolic();
    return Dim::Symbolic(Pick(kDimNames));
  }

  Type RandomType(int depth) {
    int r = Int(0, 99);
    if (r < 70 || depth >= 2) {
      std::vector<Dim> dims;
      int rank = Int(0, 4);
      for (int i = 0; i < rank; ++i) dims.push_back(RandomDim());
      return MakeTensorType(std::move(dims), Pick(kAllDataTypes));
    }
    if (r < 85) {
      std::vector<Type> fields;
      int n = Int(0, 3);
      for (int i = 0; i < n; ++i) fields.push_back(RandomType(depth + 1));
      return MakeTupleType(std::move(fields));
    }
    std::vector<Type> args;
    int n = Int(0, 2);
    for (int i = 0; i < n; ++i) args.push_back(RandomType(depth + 1));
    return MakeFuncType(std::move(args), RandomType(depth + 1));
  }

  double RandomDouble() {
    static const double kSpecial[] = {0.0,
                                      -0.0,
                                      1.0,
                                      2.0,
                                      -2.5,
                                      0.1,
                                      1e-05,
                                      1e20,
                                      1e-300,
                                      std::numeric_limits<double>::denorm_min(),
                                      std::numeric_limits<double>::max(),
                                      std::numeric_limits<double>::infinity(),
                                      -std::numeric_limits<double>::infinity(),
                                      std::numeric_limits<double>::quiet_NaN(),
                                      -std::numeric_limits<double>::quiet_NaN()};
    if (Chance(0.5)) return Pick(kSpecial);
    return std::ldexp(static_cast<double>(Int(-1000000, 1000000)), Int(-60, 60));
  }

  float RandomFloat() {
    static const float kSpecial[] = {0.0f,
                                     -0.0f,
                                     1.0f,
                                     -2.5f,
                                     1e-05f,
                                     3e38f,
                                     std::numeric_limits<float>::denorm_min(),
                                     std::numeric_limits<float>::max(),
                                     std::numeric_limits<float>::infinity(),
                                     -std::numeric_limits<float>::infinity(),
                                     std::numeric_limits<float>::quiet_NaN(),
                                     -std::numeric_limits<float>::quiet_NaN()};
    if (Chance(0.5)) return Pick(kSpecial);
    return std::ldexp(static_cast<float>(Int(-100000, 100000)), Int(-30, 30));
  }

  int64_t RandomInt64() {
    static const int64_t kSpecial[] = {0, 1, -1, std::numeric_limits<int64_t>::min(),
                                       std::numeric_limits<int64_t>::max()};
    if (Chance(0.3)) return Pick(kSpecial);
    return Int(-100000, 100000);
  }

  AttrValue RandomAttrValue(int depth) {
    int r = Int(0, depth < 2 ? 7 : 6);
    switch (r) {
      case 0:
        return AttrValue(RandomInt64());
      case 1:
        return AttrValue(RandomDouble());
      case 2:
        return AttrValue(Chance(0.5));
      case 3:
        return AttrValue(std::string(Pick(kStrings)));
      case 4:
        return AttrValue(Pick(kAllDataTypes));
      case 5: {
        ShapeValue shape;
        int rank = Int(0, 4);
        for (int i = 0; i < rank; ++i) shape.dims.push_back(RandomDim());
        return AttrValue(std::move(shape));
      }
      case 6:
        return IntArray({Int(0, 4), Int(0, 4)});
      default: {
        AttrValue::Array elements;
        int n = Int(0, 3);
        for (int i = 0; i < n; ++i) elements.push_back(RandomAttrValue(depth + 1));
        return AttrValue(std::move(elements));
      }
    }
  }

  Attrs RandomAttrs(bool for_function) {
    std::vector<AttrsNode::Field> fields;
    if (for_function && Chance(0.5)) fields.emplace_back(kAttrPrimitive, AttrValue(1));
    int n = Int(1, 4);
    for (int i = 0; i < n; ++i) {
      std::string key = Pick(kAttrKeys);
      bool taken = false;
      for (const auto& field : fields) taken = taken || field.first == key;
      if (!taken) fields.emplace_back(std::move(key), RandomAttrValue(0));
    }
    return MakeAttrs(std::move(fields));
  }

  // --- Constants and variables ---

  TensorData RandomScalarData(DataType dtype) {
    switch (dtype) {
      case DataType::kFloat32:
        return MakeScalar(RandomFloat());
      case DataType::kFloat64:
        return MakeScalar(RandomDouble());
      case DataType::kInt32:
        return MakeScalar(static_cast<int32_t>(RandomInt64()));
      case DataType::kInt64:
        return MakeScalar(RandomInt64());
      default:
        return MakeScalar(Chance(0.5));
    }
  }

  Constant RandomConstant() {
    TensorData data;
    if (!options_.metadata_constants || Chance(0.6)) {
      static const DataType kInline[] = {DataType::kFloat32, DataType::kFloat64, DataType::kInt32,
                                         DataType::kInt64, DataType::kBool};
      data = RandomScalarData(Pick(kInline));
    } else {
      DataType dtype = Pick(kAllDataTypes);
      std::vector<int64_t> shape;
      int rank = Int(0, 3);
      for (int i = 0; i < rank; ++i) shape.push_back(Int(0, 4));
      if (rank == 0 && PrintsInline(dtype)) {
        data = RandomScalarData(dtype);
      } else {
        int64_t count = 1;
        for (int64_t d : shape) count *= d;
        std::string bytes(static_cast<size_t>(count * DataTypeBytes(dtype)), '\0');
        for (char& byte : bytes) byte = static_cast<char>(Int(0, 255));
        data = MakeTensorData(dtype, std::move(shape), std::move(bytes));
      }
    }
    return MakeConstant(std::move(data), RandomSpan());
  }

  Var RandomVar() {
    Type type = Chance(0.5) ? RandomType(0) : Type();
    return MakeVar(Pick(kVarNames), std::move(type), RandomSpan(), RandomDevice());
  }

  // --- Expressions ---

  void Remember(const Expr& expr) { pools_.back().push_back(expr); }

  // An expression already built in a scope that is still open, or null.
  Expr PickExisting() {
    size_t total = 0;
    for (const auto& pool : pools_) total += pool.size();
    if (total == 0) return Expr();
    size_t index = static_cast<size_t>(Int(0, static_cast<int>(total) - 1));
    for (const auto& pool : pools_) {
      if (index < pool.size()) return pool[index];
      index -= pool.size();
    }
    return Expr();
  }

  Expr Operand(int depth) {
    int r = Int(0, 99);
    if (budget_ <= 0 || r < 40) {
      if (Expr existing = PickExisting()) return existing;
    }
    if (budget_ <= 0 || r < 60) {
      Constant constant = RandomConstant();
      if (Chance(0.5)) Remember(constant);
      return constant;
    }
    return NewExpr(depth);
  }

  Expr NewExpr(int depth) {
    --budget_;
    bool can_nest = depth < options_.max_scope_depth && budget_ > 4;
    int r = Int(0, 99);
    Expr expr;
    if (r < 50 || (!can_nest && r >= 75)) {
      expr = NewCall(depth, can_nest);
    } else if (r < 62) {
      std::vector<Expr> elements;
      int n = Int(0, 3);
      for (int i = 0; i < n; ++i) elements.push_back(Operand(depth));
      expr = MakeTuple(std::move(elements), RandomSpan());
    } else if (r < 75) {
      // Any operand, constants included (they print as `(3).0`).
      expr = MakeTupleGetItem(Operand(depth), Int(0, 3), RandomSpan());
    } else if (r < 84) {
      Expr cond = Operand(depth);
      Expr then_branch = Body(depth + 1, false);
      Expr else_branch = Body(depth + 1, false);
      expr = MakeIf(std::move(cond), std::move(then_branch), std::move(else_branch), RandomSpan());
    } else if (r < 93) {
      expr = NewFunction(depth + 1);
    } else {
      expr = Body(depth + 1, /*force_let=*/true);  // a Let in operand position
    }
    Remember(expr);
    return expr;
  }

  Expr NewCall(int depth, bool can_nest) {
    Expr callee;
    int r = Int(0, 99);
    if (r < 10 && globals_.size() > 0) {
      callee = globals_[Int(0, static_cast<int>(globals_.size()) - 1)];
    } else if (r < 20 && can_nest) {
      callee = NewFunction(depth + 1);
    } else {
      callee = GetOp(Pick(kOps));
    }
    std::vector<Expr> args;
    int n = Int(0, 3);
    for (int i = 0; i < n; ++i) args.push_back(Operand(depth));
    Attrs attrs = Chance(0.6) ? RandomAttrs(false) : Attrs();
    return MakeCall(std::move(callee), std::move(args), std::move(attrs), RandomSpan());
  }

  // A scope: some lets, then a result; expressions built here die with it.
  Expr Body(int depth, bool force_let) {
    pools_.emplace_back();
    struct Binding {
      Var var;
      Expr value;
      Span span;
    };
    std::vector<Binding> lets;
    int n = force_let ? Int(1, 2) : Int(0, 2);
    for (int i = 0; i < n; ++i) {
      Expr value = Operand(depth);
      Var var = RandomVar();
      Remember(var);
      lets.push_back(Binding{std::move(var), std::move(value), RandomSpan()});
    }
    Expr result = budget_ > 0 && Chance(0.8) ? NewExpr(depth) : Operand(depth);
    pools_.pop_back();
    for (auto it = lets.rbegin(); it != lets.rend(); ++it) {
      result = MakeLet(it->var, it->value, result, it->span);
    }
    return result;
  }

  Function NewFunction(int depth) {
    pools_.emplace_back();
    std::vector<Var> params;
    int n = Int(0, 3);
    for (int i = 0; i < n; ++i) {
      params.push_back(RandomVar());
      Remember(params.back());
    }
    Expr body = Body(depth, false);
    pools_.pop_back();
    Type ret_type = Chance(0.4) ? RandomType(0) : Type();
    Attrs attrs = Chance(0.4) ? RandomAttrs(true) : Attrs();
    return MakeFunction(std::move(params), std::move(body), std::move(ret_type), std::move(attrs),
                        RandomSpan(), RandomDevice());
  }

  std::mt19937_64 rng_;
  RandomGraphOptions options_;
  int budget_ = 0;
  std::vector<std::vector<Expr>> pools_;
  std::vector<GlobalVar> globals_;
};

}  // namespace

IRModule RandomModule(uint64_t seed, const RandomGraphOptions& options) {
  return Generator(seed, options).Run();
}

}  // namespace kiln::test
