// Type relations of the reduce op family against shapes worked out by hand:
// axis lists (empty, negative, exclude), keepdims, symbolic dims kept, arg
// reductions giving int64, and the errors a user sees.
#include <gtest/gtest.h>

#include "engine/op/op_registry.h"
#include "engine/op/type_inference.h"
#include "engine/op/type_relations.h"

namespace kiln {
namespace {

Type T(std::vector<Dim> dims, DataType dtype = DataType::kFloat32) {
  return MakeTensorType(std::move(dims), dtype);
}
Type F32(std::initializer_list<int64_t> dims) { return MakeTensorType(dims, DataType::kFloat32); }
Dim N(const char* name = "N") { return Dim::Symbolic(name); }
Dim S(int64_t v) { return Dim::Static(v); }

std::string Infer(const std::string& op, std::vector<Type> args,
                  std::vector<AttrsNode::Field> attrs = {}) {
  const OpEntry* entry = OpRegistry::Global().Find(op);
  if (entry == nullptr) return "no such op " + op;
  auto type = InferCallType(*entry, args, MakeAttrs(std::move(attrs)));
  if (!type.ok()) return "error: " + std::string(type.status().message());
  return TypeToString(*type);
}

TEST(ReduceOpsTest, AxesAndKeepdims) {
  EXPECT_EQ(Infer("sum", {F32({2, 3, 4})}, {{"axis", IntArray({1})}}), "Tensor[(2, 4), float32]");
  EXPECT_EQ(Infer("sum", {F32({2, 3, 4})}, {{"axis", IntArray({1})}, {"keepdims", true}}),
            "Tensor[(2, 1, 4), float32]");
  // Negative axes count from the end; order does not matter.
  EXPECT_EQ(Infer("mean", {F32({2, 3, 4})}, {{"axis", IntArray({-1, 0})}}), "Tensor[(3), float32]");
  // An empty list reduces everything.
  EXPECT_EQ(Infer("max", {F32({2, 3, 4})}), "Tensor[(), float32]");
  EXPECT_EQ(Infer("min", {F32({2, 3, 4})}, {{"keepdims", true}}), "Tensor[(1, 1, 1), float32]");
  // exclude reduces the axes not listed.
  EXPECT_EQ(Infer("prod", {F32({2, 3, 4})}, {{"axis", IntArray({1})}, {"exclude", true}}),
            "Tensor[(3), float32]");
  // Integer inputs keep their dtype.
  EXPECT_EQ(Infer("sum", {T({S(5), S(2)}, DataType::kInt64)}, {{"axis", IntArray({0})}}),
            "Tensor[(2), int64]");
}

TEST(ReduceOpsTest, SymbolicDimsStay) {
  EXPECT_EQ(Infer("sum", {T({N(), S(3), N("L")})}, {{"axis", IntArray({1})}}),
            "Tensor[(N, L), float32]");
  EXPECT_EQ(Infer("mean", {T({N(), S(3), N("L")})}, {{"axis", IntArray({2})}, {"keepdims", true}}),
            "Tensor[(N, 3, 1), float32]");
}

TEST(ReduceOpsTest, ArgReductionsGiveInt64) {
  EXPECT_EQ(Infer("argmax", {F32({2, 3, 4})}, {{"axis", 1}}), "Tensor[(2, 4), int64]");
  EXPECT_EQ(Infer("argmin", {F32({2, 3, 4})}, {{"axis", -1}, {"keepdims", true}}),
            "Tensor[(2, 3, 1), int64]");
  EXPECT_EQ(Infer("argmax", {T({N(), S(7)})}, {{"axis", 1}, {"select_last_index", true}}),
            "Tensor[(N), int64]");
  // The default axis is 0.
  EXPECT_EQ(Infer("argmax", {F32({5, 6})}), "Tensor[(6), int64]");
}

TEST(ReduceOpsTest, ErrorsSayWhatIsWrong) {
  EXPECT_EQ(Infer("sum", {F32({2, 3, 4})}, {{"axis", IntArray({3})}}),
            "error: axis 3 is out of range for rank 3 (expected -3 to 2)");
  EXPECT_EQ(Infer("sum", {F32({2, 3, 4})}, {{"axis", IntArray({1, -2})}}),
            "error: axis -2 is listed twice");
  EXPECT_EQ(Infer("sum", {T({S(2)}, DataType::kBool)}),
            "error: argument 0 has dtype bool, expected a numeric dtype");
  EXPECT_EQ(Infer("argmax", {F32({2, 3})}, {{"axis", 2}}),
            "error: axis 2 is out of range for rank 2 (expected -2 to 1)");
  EXPECT_EQ(Infer("argmin", {F32({2, 0})}, {{"axis", 1}}),
            "error: cannot take the index of an extreme along axis 1 of extent 0");
  // The schema names the valid attributes.
  EXPECT_EQ(Infer("sum", {F32({2})}, {{"axes", IntArray({0})}}),
            "error: operator sum has no attribute 'axes' (valid: axis, keepdims, exclude)");
  EXPECT_EQ(Infer("sum", {F32({2})}, {{"keepdims", 2}}),
            "error: operator sum attribute 'keepdims' must be bool");
}

TEST(ReduceOpsTest, RegisteredAsReductions) {
  for (const char* name : {"sum", "mean", "max", "min", "prod", "argmax", "argmin"}) {
    const OpEntry* entry = OpRegistry::Global().Find(name);
    ASSERT_NE(entry, nullptr) << name;
    EXPECT_EQ(entry->pattern, OpPattern::kReduction) << name;
  }
}

}  // namespace
}  // namespace kiln
