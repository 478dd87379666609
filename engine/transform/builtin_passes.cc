// The one list of builtin passes. Each pass's name, opt level and required
// passes are defined once, in its own factory; this table adds the summary
// that --list-passes shows. Add a pass here and nowhere else.
#include "engine/transform/builtin_passes.h"

#include "absl/strings/str_cat.h"
#include "engine/transform/canonicalize_ops.h"
#include "engine/transform/convert_layout.h"
#include "engine/transform/dead_code_elimination.h"
#include "engine/transform/defuse_ops.h"
#include "engine/transform/device_plan_lite.h"
#include "engine/transform/eliminate_common_subexpr.h"
#include "engine/transform/fold_constant.h"
#include "engine/transform/fold_gate_into_weights.h"
#include "engine/transform/fuse_layer_norm.h"
#include "engine/transform/fold_scale_axis.h"
#include "engine/transform/fuse_ops.h"
#include "engine/transform/infer_type.h"
#include "engine/transform/inline.h"
#include "engine/transform/label_ops.h"
#include "engine/transform/plan_devices.h"
#include "engine/transform/remove_unused_functions.h"
#include "engine/transform/simplify_expr.h"
#include "engine/transform/simplify_inference.h"
#include "engine/transform/to_a_normal_form.h"
#include "engine/transform/to_graph_normal_form.h"

namespace kiln {

void RegisterBuiltinPasses(PassRegistry& registry) {
  struct Builtin {
    Pass (*factory)();
    const char* summary;
  };
  // In pipeline order, roughly; --list-passes sorts by name.
  const Builtin builtins[] = {
      {transform::InferType, "infer checked types and normalize call attributes (incremental)"},
      {transform::ToGraphNormalForm, "replace let bindings by the values they bind"},
      {transform::ToANormalForm, "bind every intermediate value to a let variable"},
      {transform::Inline, "expand calls of functions marked Inline=1 and drop them"},
      {transform::RemoveUnusedFunctions, "drop functions main does not reach"},
      {transform::SimplifyInference,
       "unpack batch_norm and instance_norm into arithmetic"},
      {transform::SimplifyExpr,
       "collapse reshape, transpose and cast chains; remove identity ops"},
      {transform::EliminateCommonSubexpr, "compute each distinct value once, merging spans"},
      {transform::FoldConstant,
       "evaluate constant subgraphs through the op compute definitions and the interpreter"},
      {transform::FuseLayerNorm,
       "fuse a layer normalization written op by op (mean, subtract, power, sqrt, divide) into "
       "nn.layer_norm"},
      {transform::FoldScaleAxis, "fold per-channel scale multiplies into conv / dense weights"},
      {transform::FoldGateIntoWeights,
       "fold run-time channel gates (squeeze-excitation) into blocked conv weights"},
      {transform::DeadCodeElimination, "remove let bindings whose variable is unused"},
      {transform::CanonicalizeOps, "rewrite nn.bias_add into expand_dims and add"},
      {transform::DefuseOps, "inline fused (Primitive) functions back into their callers"},
      {transform::LabelOps, "name fused functions after their ops (fused_nn_conv2d_add_nn_relu)"},
      {transform::DPL,
       "device plan lite: expand the critical virtual devices to every expression"},
  };
  for (const Builtin& builtin : builtins) {
    absl::Status status = registry.Register(builtin.factory()->info(), builtin.summary,
                                            builtin.factory);
    KILN_CHECK(status.ok()) << status.message();
  }

  // Passes with options.
  Pass fuse_ops = transform::FuseOps();
  absl::Status status = registry.Register(PassRegistration{
      fuse_ops->info(),
      "dominator-tree fusion of operator calls into Primitive functions",
      {{"fuse_opt_level", ConfigType::kInt, ConfigValue(int64_t{2}),
        "0: every operator call is its own fused function; 1 and above: fuse by pattern kind"},
       {"max_fuse_depth", ConfigType::kInt, ConfigValue(transform::kDefaultMaxFuseDepth),
        "the largest number of nodes one fused function may hold"}},
      [](const PassOptions& options) -> absl::StatusOr<Pass> {
        // A fused function inlines every stage into one loop-IR expression,
        // which the loop passes walk recursively: its depth is bounded here.
        const int64_t depth = options.Get<int64_t>("max_fuse_depth");
        if (depth > transform::kDefaultMaxFuseDepth) {
          return absl::InvalidArgumentError(absl::StrCat(
              "max_fuse_depth must be at most ", transform::kDefaultMaxFuseDepth, ", got ", depth));
        }
        return transform::FuseOps(options.Get<int64_t>("fuse_opt_level"), depth);
      }});
  KILN_CHECK(status.ok()) << status.message();

  Pass convert_layout = transform::ConvertLayout(transform::kDefaultLayoutBlock);
  status = registry.Register(PassRegistration{
      convert_layout->info(),
      "run convolutions in blocked NCHW{b}c and keep values blocked between them",
      {{"block", ConfigType::kInt, ConfigValue(transform::kDefaultLayoutBlock),
        "channels per block (the vector lanes of the convolution kernels); 0: off"}},
      [](const PassOptions& options) -> absl::StatusOr<Pass> {
        const int64_t block = options.Get<int64_t>("block");
        if (block < 0 || block > 64) {
          return absl::InvalidArgumentError(
              absl::StrCat("block must be in [0, 64], got ", block));
        }
        return transform::ConvertLayout(block);
      }});
  KILN_CHECK(status.ok()) << status.message();
  Pass plan_devices = transform::PlanDevices();
  status = registry.Register(PassRegistration{
      plan_devices->info(),
      "solve device constraints: a virtual device on every expression, device_copy inserted",
      {{"default_device_type", ConfigType::kString, ConfigValue(std::string("cpu")),
        "the device type of values nothing constrains"}},
      [](const PassOptions& options) -> absl::StatusOr<Pass> {
        return transform::PlanDevices(options.Get<std::string>("default_device_type"));
      }});
  KILN_CHECK(status.ok()) << status.message();
}

}  // namespace kiln
