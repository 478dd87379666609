// Device planning, tested in text as the virtual-device seed plans it: for
// an input program and the expected program in the minimal representation
// (devices only on parameters, let variables and function results),
//   DPL(parse(expected)) == PlanDevices(parse(input))   (every expression's device)
//   parse(print(complete)) == parse(expected)           (and the same text).
// The errors (conflicting constraints, missing critical devices) are lit
// cases: tests/lit/transform/plan_devices.kir, device_plan_lite.kir.
#include <gtest/gtest.h>

#include <string>

#include "engine/transform/device_plan_lite.h"
#include "engine/transform/plan_devices.h"
#include "tests/unit/transform/transform_test_util.h"

namespace kiln {
namespace {

using testing::ParseTyped;
using testing::RunPass;

::testing::AssertionResult EqualAllDevices(const IRModule& actual, const IRModule& expected) {
  if (!actual || !expected) return ::testing::AssertionFailure() << "missing module";
  StructuralEqualOptions options;
  options.compare_all_virtual_devices = true;
  auto mismatch = FindFirstMismatch(actual, expected, options);
  if (!mismatch) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << mismatch->path << ": " << mismatch->reason << "\n"
                                       << RenderStructuralMismatch(actual, expected, *mismatch);
}

// Every expression of `module` except Op and GlobalVar handles has a device.
int CountUnplaced(const IRModule& module) {
  int missing = 0;
  for (const auto& entry : module->functions) {
    PostOrderVisit(entry.second, [&](const Expr& expr) {
      if (expr->kind() == ObjectKind::kOp || expr->kind() == ObjectKind::kGlobalVar) return;
      if (IsFullyUnconstrained(expr->virtual_device)) ++missing;
    });
  }
  return missing;
}

void CheckPlan(std::string_view input, std::string_view expected,
               std::string default_device_type = "cpu") {
  IRModule complete =
      RunPass(transform::PlanDevices(std::move(default_device_type)), ParseTyped(input));
  IRModule minimal = ParseTyped(expected);
  ASSERT_TRUE(complete && minimal);
  EXPECT_EQ(CountUnplaced(complete), 0) << PrintModule(complete);

  absl::StatusOr<IRModule> expanded = transform::DevicePlanLite(minimal);
  ASSERT_TRUE(expanded.ok()) << expanded.status();
  EXPECT_EQ(CountUnplaced(*expanded), 0);
  EXPECT_TRUE(EqualAllDevices(complete, *expanded));
  // The minimal form differs from the complete one only off the critical places.
  EXPECT_FALSE(EqualAllDevices(minimal, *expanded));
  EXPECT_TRUE(StructuralEqual(minimal, *expanded));

  // The printer keeps only the critical devices.
  std::string text = PrintModule(complete);
  EXPECT_EQ(text, PrintModule(minimal));
  IRModule reparsed = ParseTyped(text);
  EXPECT_TRUE(StructuralEqual(reparsed, minimal)) << text;
}

constexpr char kTwoDevicesInput[] = R"(
def @main(%x: Tensor[(5, 7), float32], %y: Tensor[(5, 7), float32],
          %z: Tensor[(5, 7), float32],
          virtual_device=VirtualDevice(device_type="cuda", device_id=0)) {
  %0 = add(%x, %y);
  %1 = on_device(%0, device_type="cpu", device_id=0);
  %2 = device_copy(%1, src_device_type="cpu", src_device_id=0, dst_device_type="cuda",
                   dst_device_id=0);
  subtract(%2, %z)
}
)";

constexpr char kTwoDevicesExpected[] = R"(
def @main(%x {virtual_device=VirtualDevice(device_type="cpu", device_id=0)}: Tensor[(5, 7), float32],
          %y {virtual_device=VirtualDevice(device_type="cpu", device_id=0)}: Tensor[(5, 7), float32],
          %z {virtual_device=VirtualDevice(device_type="cuda", device_id=0)}: Tensor[(5, 7), float32],
          virtual_device=VirtualDevice(device_type="cuda", device_id=0)) {
  %0 = add(%x, %y);
  %1 = device_copy(%0, src_device_type="cpu", src_device_id=0, dst_device_type="cuda",
                   dst_device_id=0);
  subtract(%1, %z)
}
)";

TEST(DevicePlanningTest, TwoDevicesWithDeviceCopy) { CheckPlan(kTwoDevicesInput, kTwoDevicesExpected); }

TEST(DevicePlanningTest, OnDeviceWithFreeBodyInsertsDeviceCopy) {
  CheckPlan(R"(
def @main(%x {virtual_device=VirtualDevice(device_type="cpu")}: Tensor[(4), float32],
          %y: Tensor[(4), float32]) {
  %0 = on_device(%x, device_type="cuda", constrain_body=False);
  add(%0, %y)
}
)",
            R"(
def @main(%x {virtual_device=VirtualDevice(device_type="cpu")}: Tensor[(4), float32],
          %y {virtual_device=VirtualDevice(device_type="cuda")}: Tensor[(4), float32],
          virtual_device=VirtualDevice(device_type="cuda")) {
  %0 = device_copy(%x, src_device_type="cpu", dst_device_type="cuda");
  add(%0, %y)
}
)");
}

TEST(DevicePlanningTest, LetWithDevice) {
  CheckPlan(R"(
def @main(%x: Tensor[(4), float32]) {
  let %a {virtual_device=VirtualDevice(device_type="cuda", device_id=1)} = exp(%x);
  %0 = (%a, %a);
  %1 = %0.1;
  device_copy(%1, src_device_type="cuda", src_device_id=1, dst_device_type="cpu")
}
)",
            R"(
def @main(%x {virtual_device=VirtualDevice(device_type="cuda", device_id=1)}: Tensor[(4), float32],
          virtual_device=VirtualDevice(device_type="cpu")) {
  let %a {virtual_device=VirtualDevice(device_type="cuda", device_id=1)} = exp(%x);
  %0 = (%a, %a);
  %1 = %0.1;
  device_copy(%1, src_device_type="cuda", src_device_id=1, dst_device_type="cpu")
}
)");
}

TEST(DevicePlanningTest, SingleDeviceGetsTheDefault) {
  CheckPlan(R"(
def @main(%x: Tensor[(4), float32], %y: Tensor[(4), float32]) {
  %0 = add(%x, %y);
  multiply(%0, 2f)
}
)",
            R"(
def @main(%x {virtual_device=VirtualDevice(device_type="cpu")}: Tensor[(4), float32],
          %y {virtual_device=VirtualDevice(device_type="cpu")}: Tensor[(4), float32],
          virtual_device=VirtualDevice(device_type="cpu")) {
  %0 = add(%x, %y);
  multiply(%0, 2f)
}
)");
  CheckPlan(R"(
def @main(%x: Tensor[(4), float32]) {
  exp(%x)
}
)",
            R"(
def @main(%x {virtual_device=VirtualDevice(device_type="cuda")}: Tensor[(4), float32],
          virtual_device=VirtualDevice(device_type="cuda")) {
  exp(%x)
}
)",
            "cuda");
}

TEST(DevicePlanningTest, CallOfGlobalFunctionUsesItsParameterDevices) {
  CheckPlan(R"(
def @f(%a {virtual_device=VirtualDevice(device_type="cuda")}: Tensor[(4), float32]) {
  negative(%a)
}
def @main(%x: Tensor[(4), float32]) {
  %0 = on_device(%x, device_type="cuda", constrain_result=False);
  @f(%0)
}
)",
            R"(
def @f(%a {virtual_device=VirtualDevice(device_type="cuda")}: Tensor[(4), float32],
       virtual_device=VirtualDevice(device_type="cuda")) {
  negative(%a)
}
def @main(%x {virtual_device=VirtualDevice(device_type="cuda")}: Tensor[(4), float32],
          virtual_device=VirtualDevice(device_type="cuda")) {
  @f(%x)
}
)");
}

TEST(DevicePlanningTest, PrinterKeepsOnlyCriticalDevices) {
  IRModule complete = RunPass(transform::PlanDevices(), ParseTyped(kTwoDevicesInput));
  ASSERT_TRUE(complete);
  std::string text = PrintModule(complete);
  // Three parameters and the result; add, device_copy and subtract print none.
  size_t count = 0;
  for (size_t at = text.find("VirtualDevice("); at != std::string::npos;
       at = text.find("VirtualDevice(", at + 1)) {
    ++count;
  }
  EXPECT_EQ(count, 4u) << text;
  EXPECT_EQ(text.find("on_device"), std::string::npos) << text;
  IRModule minimal = ParseTyped(kTwoDevicesExpected);
  EXPECT_TRUE(StructuralEqual(ParseTyped(text), minimal)) << text;
}

TEST(DevicePlanningTest, CompareAllVirtualDevicesOption) {
  IRModule minimal = ParseTyped(kTwoDevicesExpected);
  absl::StatusOr<IRModule> complete = transform::DevicePlanLite(minimal);
  ASSERT_TRUE(complete.ok()) << complete.status();
  StructuralEqualOptions all;
  all.compare_all_virtual_devices = true;
  EXPECT_TRUE(StructuralEqual(minimal, *complete));
  auto mismatch = FindFirstMismatch(minimal, *complete, all);
  ASSERT_TRUE(mismatch.has_value());
  EXPECT_NE(mismatch->path.find("virtual_device"), std::string::npos) << mismatch->path;
  EXPECT_TRUE(StructuralEqual(*complete, *complete, all));
}

}  // namespace
}  // namespace kiln
