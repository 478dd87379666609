// PlanWeightPrefetches (which kernel fetches which weights ahead, from which loop) and
// FunctionEmitter::EmitPrefetches (the `prefetchnta`s of one host-loop iteration).
#include "engine/codegen/llvm/weight_prefetch.h"

#include <algorithm>
#include <cstdint>
#include <unordered_map>
#include <utility>

#include "engine/codegen/llvm/function_emitter.h"
#include "engine/lower/kernel_flops.h"
#include "llvm/IR/Intrinsics.h"

namespace kiln::codegen {
namespace {

// A fetched weight's lines are spread over the iterations of a kernel among this many calls
// before the one that reads it: close enough that they are still in cache when it runs.
constexpr size_t kHostLookBack = 8;
constexpr int64_t kLineBytes = 64;
// A host emits at most this many prefetches per iteration of its loop (they are unrolled into
// its body): a kernel whose loops are too few for its share would otherwise get code, and a
// burst of fetches, in proportion to a weight's size, which the request decides.
constexpr int64_t kMaxLinesPerIteration = 32;
// A kernel whose weights are fetched ahead does at most this many FLOPs per weight byte (a
// 1x1 convolution over a 7x7 map: 24.5); one doing at most kStreamedFlopsPerByte reads each
// weight once (a matrix-vector product: 0.5), and may have a weight of any size fetched,
// others only weights up to kMaxReusedFetchBytes.
constexpr int64_t kMaxFlopsPerFetchedByte = 32;
constexpr int64_t kStreamedFlopsPerByte = 4;
constexpr size_t kMaxReusedFetchBytes = size_t{2} << 20;

int64_t Lines(const lower::LoweredModule& lowered, size_t weight) {
  return (static_cast<int64_t>(lowered.constants[weight].second->bytes.size()) + kLineBytes - 1) /
         kLineBytes;
}

// Main's kernel calls in order (main is workspace Allocates around them).
void CollectCalls(const loop::Stmt& stmt, std::vector<const loop::CallKernelNode*>* out) {
  if (const auto* op = stmt.as<loop::AllocateNode>()) return CollectCalls(op->body, out);
  if (const auto* op = stmt.as<loop::SeqStmtNode>()) {
    for (const loop::Stmt& s : op->seq) CollectCalls(s, out);
    return;
  }
  if (const auto* op = stmt.as<loop::CallKernelNode>()) out->push_back(op);
}

// How often main calls each kernel, its Ifs' branches included; a call in a while loop's body
// counts as two (it runs any number of times).
void CountCalls(const loop::Stmt& stmt, std::map<std::string, int>* calls_of, int weight = 1) {
  if (const auto* op = stmt.as<loop::AllocateNode>()) return CountCalls(op->body, calls_of, weight);
  if (const auto* op = stmt.as<loop::SeqStmtNode>()) {
    for (const loop::Stmt& s : op->seq) CountCalls(s, calls_of, weight);
  } else if (const auto* op = stmt.as<loop::IfThenElseNode>()) {
    CountCalls(op->then_case, calls_of, weight);
    if (op->else_case.defined()) CountCalls(op->else_case, calls_of, weight);
  } else if (const auto* op = stmt.as<loop::WhileNode>()) {
    CountCalls(op->body, calls_of, 2);
  } else if (const auto* op = stmt.as<loop::CallKernelNode>()) {
    (*calls_of)[op->callee->name_hint] += weight;
  }
}

// a * b for non-negative a and b, saturating at INT64_MAX.
int64_t SaturatingProduct(int64_t a, int64_t b) {
  int64_t product;
  return __builtin_mul_overflow(a, b, &product) ? INT64_MAX : product;
}

// The iterations of `stmt`'s heaviest loop path: the product of its constant extents.
int64_t Iterations(const loop::Stmt& stmt) {
  if (const auto* op = stmt.as<loop::ForNode>()) {
    const auto* extent = op->extent.as<loop::IntImmNode>();
    int64_t own = extent != nullptr ? std::max<int64_t>(1, extent->value) : 1;
    return SaturatingProduct(own, std::max<int64_t>(1, Iterations(op->body)));
  }
  if (const auto* op = stmt.as<loop::SeqStmtNode>()) {
    int64_t most = 0;
    for (const loop::Stmt& s : op->seq) most = std::max(most, Iterations(s));
    return most;
  }
  if (const auto* op = stmt.as<loop::AllocateNode>()) return Iterations(op->body);
  if (const auto* op = stmt.as<loop::LetStmtNode>()) return Iterations(op->body);
  return 0;
}

// Follows the heaviest loop path of `stmt` down to the deepest loop whose iterations, counted
// over its enclosing loops (`iterations` so far), stay at or under `lines` (or the outermost
// loop when even it has more): few lines per iteration, so the fetches never come as a burst
// that stalls the kernel's own loads.
void ChooseHost(const loop::Stmt& stmt, int64_t iterations, int64_t lines,
                std::vector<const loop::ForNode*>* nest, int64_t* host_iterations) {
  if (const auto* op = stmt.as<loop::ForNode>()) {
    const auto* extent = op->extent.as<loop::IntImmNode>();
    if (extent == nullptr || extent->value <= 0) return;
    int64_t total = SaturatingProduct(iterations, extent->value);
    if (total > lines && !nest->empty()) return;
    nest->push_back(op);
    *host_iterations = total;
    return ChooseHost(op->body, total, lines, nest, host_iterations);
  }
  if (const auto* op = stmt.as<loop::SeqStmtNode>()) {
    const loop::Stmt* heaviest = nullptr;
    int64_t most = 0;
    for (const loop::Stmt& s : op->seq) {
      if (int64_t n = Iterations(s); n > most) most = n, heaviest = &s;
    }
    if (heaviest != nullptr) ChooseHost(*heaviest, iterations, lines, nest, host_iterations);
    return;
  }
  if (const auto* op = stmt.as<loop::AllocateNode>()) {
    return ChooseHost(op->body, iterations, lines, nest, host_iterations);
  }
  if (const auto* op = stmt.as<loop::LetStmtNode>()) {
    return ChooseHost(op->body, iterations, lines, nest, host_iterations);
  }
}

}  // namespace

std::map<std::string, PrefetchPlan> PlanWeightPrefetches(const lower::LoweredModule& lowered,
                                                         int64_t workspace_bytes,
                                                         int64_t footprint_bytes) {
  std::map<std::string, PrefetchPlan> plans;
  if (footprint_bytes < 0) return plans;
  const auto* main = lowered.module->Lookup("main").as<loop::PrimFuncNode>();
  if (main == nullptr) return plans;
  int64_t footprint = workspace_bytes;
  for (const auto& [name, data] : lowered.constants) footprint += static_cast<int64_t>(data->bytes.size());
  if (footprint <= footprint_bytes) return plans;

  std::vector<const loop::CallKernelNode*> calls;
  CollectCalls(main->body, &calls);
  std::map<std::string, int> calls_of;  // a kernel called more than once hosts nothing
  CountCalls(main->body, &calls_of);
  std::map<std::string, const lower::LoweredKernel*> kernel_of;
  for (const lower::LoweredKernel& kernel : lowered.kernels) kernel_of[kernel.name] = &kernel;
  auto body_of = [&](const std::string& name) {
    return Downcast<loop::PrimFuncNode>(lowered.module->Lookup(name))->body;
  };
  // Main's params: inputs, outputs, then the constants in order.
  std::unordered_map<const loop::VarNode*, size_t> weight_of;
  size_t first_weight = static_cast<size_t>(lowered.num_inputs + lowered.num_outputs);
  for (size_t i = first_weight; i < main->params.size(); ++i) {
    weight_of[main->param_buffer(i)->data.get()] = i - first_weight;
  }

  // The lines [first_line, first_line + lines) of constant `weight`.
  struct Share {
    size_t weight;
    int64_t first_line;
    int64_t lines;
  };
  std::map<std::string, std::vector<Share>> shares;
  for (size_t j = 1; j < calls.size(); ++j) {
    std::vector<size_t> weights;
    int64_t weight_bytes = 0;
    for (const loop::Buffer& arg : calls[j]->args) {
      auto it = weight_of.find(arg->data.get());
      if (it == weight_of.end()) continue;
      size_t bytes = lowered.constants[it->second].second->bytes.size();
      if (bytes >= kPrefetchedWeightBytes) weights.push_back(it->second), weight_bytes += bytes;
    }
    if (weights.empty()) continue;
    // Only where reading the weights is a good part of the kernel's time: few FLOPs per weight
    // byte. And a weight the host's L2 can hold beside its own, unless the kernel streams it
    // once (a matrix-vector product): ResNet-50's 2-9 MiB weights of 7x7 layers, fetched ahead,
    // pushed the hosts' own tiles out and saved their consumers nothing (x1.05 slower).
    auto consumer = kernel_of.find(calls[j]->callee->name_hint);
    if (consumer == kernel_of.end()) continue;
    int64_t flops = lower::KernelFlops(*consumer->second);
    if (flops > kMaxFlopsPerFetchedByte * weight_bytes) continue;
    if (flops > kStreamedFlopsPerByte * weight_bytes) {
      weights.erase(std::remove_if(weights.begin(), weights.end(), [&](size_t w) {
                      return lowered.constants[w].second->bytes.size() > kMaxReusedFetchBytes;
                    }),
                    weights.end());
    }
    if (weights.empty()) continue;
    // The lines are shared among the kernels of the window in proportion to their FLOPs
    // (earlier kernels the earlier lines), so no one kernel's loads wait behind them all; with
    // no FLOPs counted in the window, the kernel of most loop iterations fetches them. A kernel
    // main calls more than once would fetch at every call: not a host.
    std::vector<std::pair<const std::string*, int64_t>> hosts;
    int64_t window_flops = 0;
    const std::string* busiest = nullptr;
    int64_t most_iterations = -1;
    for (size_t i = j > kHostLookBack ? j - kHostLookBack : 0; i < j; ++i) {
      const std::string& name = calls[i]->callee->name_hint;
      auto kernel = kernel_of.find(name);
      if (calls_of[name] != 1 || kernel == kernel_of.end()) continue;
      int64_t flops = lower::KernelFlops(*kernel->second);
      if (flops > 0) hosts.emplace_back(&name, flops), window_flops += flops;
      if (int64_t n = Iterations(body_of(name)); n > most_iterations) most_iterations = n, busiest = &name;
    }
    if (hosts.empty() && busiest != nullptr) hosts.emplace_back(busiest, 1), window_flops = 1;
    for (size_t weight : weights) {
      int64_t lines = Lines(lowered, weight);
      int64_t done = 0, flops_so_far = 0;
      for (const auto& [name, flops] : hosts) {
        flops_so_far += flops;
        // Rounded so the last host ends exactly at `lines`.
        int64_t end = static_cast<int64_t>(static_cast<__int128>(lines) * flops_so_far / window_flops);
        if (end > done) shares[*name].push_back({weight, done, end - done});
        done = end;
      }
    }
  }

  for (const auto& [name, fetched] : shares) {
    int64_t lines = 0;
    for (const Share& share : fetched) lines += share.lines;
    PrefetchPlan plan;
    int64_t host_iterations = 1;
    ChooseHost(body_of(name), 1, lines, &plan.nest, &host_iterations);
    if (plan.nest.empty() || (lines + host_iterations - 1) / host_iterations > kMaxLinesPerIteration) {
      continue;
    }
    plan.host = plan.nest.back();
    for (const Share& share : fetched) {
      plan.targets.push_back({share.weight, share.first_line, share.lines,
                              (share.lines + host_iterations - 1) / host_iterations});
    }
    plans.emplace(name, std::move(plan));
  }
  return plans;
}

void FunctionEmitter::EmitPrefetches() {
  llvm::Type* i64 = b_.getInt64Ty();
  // The iteration's index over the host loop's nest, row-major.
  llvm::Value* iteration = b_.getInt64(0);
  for (const loop::ForNode* loop : prefetch_->nest) {
    llvm::Value* var = b_.CreateSExtOrTrunc(vars_.at(loop->loop_var.get()), i64);
    llvm::Value* min = b_.CreateSExtOrTrunc(EmitExpr(loop->min), i64);
    llvm::Value* extent = b_.CreateSExtOrTrunc(EmitExpr(loop->extent), i64);
    iteration = b_.CreateAdd(b_.CreateMul(iteration, extent), b_.CreateSub(var, min));
  }
  llvm::Function* prefetch =
      llvm::Intrinsic::getDeclaration(&module_.module, llvm::Intrinsic::prefetch, {b_.getPtrTy()});
  for (size_t t = 0; t < prefetch_->targets.size(); ++t) {
    const PrefetchPlan::Target& target = prefetch_->targets[t];
    llvm::Value* first = b_.CreateAdd(b_.getInt64(target.first_line),
                                      b_.CreateMul(iteration, b_.getInt64(target.lines_per_iteration)));
    llvm::Value* last = b_.getInt64(target.first_line + target.lines - 1);
    for (int64_t k = 0; k < target.lines_per_iteration; ++k) {
      // Past the share's end (the last iterations' part rounded up) its last line again: a
      // hit, never an address outside the weight.
      llvm::Value* line = b_.CreateAdd(first, b_.getInt64(k));
      line = b_.CreateSelect(b_.CreateICmpSLT(line, last), line, last);
      llvm::Value* address =
          b_.CreateInBoundsGEP(b_.getInt8Ty(), prefetch_weights_[t], b_.CreateMul(line, b_.getInt64(kLineBytes)));
      // Read, no temporal locality (prefetchnta: measured faster than prefetcht0 here, whose
      // lines push the host's own tiles out of L1), data cache.
      b_.CreateCall(prefetch, {address, b_.getInt32(0), b_.getInt32(0), b_.getInt32(1)});
    }
  }
}

}  // namespace kiln::codegen
