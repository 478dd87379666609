// Native code from a lowered module: LLVM 19 IR built from the loop IR (every kernel PrimFunc and
// the entry that runs them in order), optimized by LLVM's new pass manager for the requested
// target, and emitted as an object file (plus assembly, LLVM IR text and a C header on request).
// This header is LLVM-free: only engine/codegen/llvm/*.cc include LLVM.
//
// The object's ABI is engine/runtime/kiln_runtime.h: `<prefix>_run(inputs, outputs, workspace)`
// and its signature queries. Parallel loops call libkiln_rt's kiln_rt_parallel_for.
#pragma once

#include <cstdint>
#include <functional>
#include <string>

#include "absl/status/statusor.h"
#include "engine/lower/lower_module.h"
#include "engine/pass/instrument.h"

namespace kiln::codegen {

struct TargetOptions {
  // An LLVM triple ("x86_64-linux-gnu", "aarch64-linux-gnu"); empty: the host's.
  std::string triple;
  // A CPU name ("x86-64-v2", "skylake-avx512", "znver4"); empty: the host's when the triple is
  // empty, the architecture's generic CPU otherwise.
  std::string cpu;
  // Extra features ("+avx2,-avx512f"); empty: the host's when triple and cpu are empty.
  std::string features;
};

struct CodegenOptions {
  TargetOptions target;
  // LLVM's pipeline level, 0..3.
  int opt_level = 2;
  // Fast-math flags on float arithmetic (reassociation, no NaN/Inf); off by default, since they
  // change results.
  bool fast_math = false;
  // Prefix of every exported symbol (`<prefix>_run`): a C identifier.
  std::string symbol_prefix = "kiln_model";
  // Which texts to produce besides the object.
  bool emit_assembly = false;
  bool emit_llvm_ir = false;
  // A self-contained ELF shared library (NativeModule::shared_library): the object and libkiln_rt
  // linked by lld, exporting only `<prefix>_*`, needing only glibc (libc, libm, libmvec). For
  // x86_64 Linux targets, the architecture libkiln_rt is prebuilt for.
  bool emit_shared_library = false;
  // Bracket every kernel call in the entry with kiln_rt_profile_enter/exit (kiln_runtime.h): per-
  // kernel calls and time for kiln-run --benchmark. Off by default (two calls per kernel).
  bool profile_kernels = false;
  // A model whose weights and workspace take more bytes than this gets its large weights fetched
  // ahead, each by an earlier kernel while it computes (weight_prefetch.h): for a deployment
  // whose weights do not stay in the last-level cache between runs. 0: always; negative: never,
  // the default: at 16 MiB (half of a 32 MiB L3 shared with a VM's neighbours) the fetches made
  // MobileNetV2 and EfficientNet 2-3% slower on the Zen 3 hosts (whole models, paired runs),
  // their host kernels' own tiles losing L1, for about 2% gained on a Zen 4 host's kernel sums.
  int64_t weight_prefetch_footprint_bytes = -1;
  // DWARF line tables pointing into the printed loop IR (NativeModule::loop_source, named
  // "model.loop.py", the LOOP_IR artifact): objdump -S, gdb and perf attribute machine code to
  // loop-IR lines. With emit_assembly, the assembly is annotated with each instruction's line
  // and ONNX layers, and NativeModule::provenance_json maps them.
  bool debug_info = true;
  // Polled before every LLVM pass; true skips the remaining optional passes and the compile
  // ends Cancelled. May be empty.
  std::function<bool()> is_cancelled;
  // Told about every LLVM pass as it finishes (see pass_events.h), then about "MachineCode".
  // May be empty.
  std::function<void(const BackendPassRun&)> on_pass;
};

// The target a compile resolved to: what the object was built for, spelled out so a compile id
// can cover it and two compiles of one request produce the same bytes.
struct ResolvedTarget {
  std::string triple;
  std::string cpu;
  std::string features;  // sorted, comma-separated
};

struct NativeModule {
  ResolvedTarget target;
  std::string symbol_prefix;
  std::string object;    // an ELF relocatable object
  std::string assembly;  // when asked
  std::string llvm_ir;   // the optimized module's text, when asked
  std::string header;    // the C header declaring the model's entry points
  std::string shared_library;  // when asked: lib<prefix>.so
  // With debug_info: the printed loop IR the line tables name, and with emit_assembly the
  // JSON map asm line -> loop-IR line -> ONNX layers (provenance.h) and its counts.
  std::string loop_source;
  std::string provenance_json;
  int64_t kernel_instructions = 0;
  int64_t kernel_instructions_with_layers = 0;
  // Bytes the caller provides as `workspace` (values between kernels and kernel scratch).
  int64_t workspace_bytes = 0;
  // Where code generation spent its time, in seconds: building the LLVM module from loop IR,
  // LLVM's optimization pipeline, machine code (and the texts asked for), the shared library.
  double build_seconds = 0;
  double optimize_seconds = 0;
  double emit_seconds = 0;
  double link_seconds = 0;
};

// The target `options` name, with host defaults filled in; an unknown triple or CPU is an
// InvalidArgument error naming it.
absl::StatusOr<ResolvedTarget> ResolveTarget(const TargetOptions& options);

// The float32 lanes of the widest vector register the target `options` names: 16 with AVX-512,
// 8 with AVX, 4 with SSE or AArch64's NEON (and any other architecture). Convolutions are laid
// out in blocks of this many channels, so each output-channel block is one register.
absl::StatusOr<int64_t> VectorFloatLanes(const TargetOptions& options);

// The vector registers of the target `options` names: 32 with AVX-512 or AArch64's NEON, 16 with
// AVX or SSE (and any other architecture). A register tile's accumulators must leave some of them
// to the weight vectors and broadcast inputs of each reduce step (lower::MaxAccumulatorsFor).
absl::StatusOr<int64_t> VectorRegisters(const TargetOptions& options);

// `lowered` must have a main (a full lowering, not one kernel's). A construct the code generator
// does not support is an Unimplemented error naming the kernel and statement.
absl::StatusOr<NativeModule> EmitNative(const lower::LoweredModule& lowered,
                                        const CodegenOptions& options);

}  // namespace kiln::codegen
