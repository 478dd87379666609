// How fast one core streams a buffer it read before, by buffer size: the figure behind
// CodegenOptions::weight_prefetch_footprint_bytes (engine/codegen/llvm/weight_prefetch.h). A
// model's weights and workspace are read once per run; while they fit the cache share the
// core keeps, the next run finds them there. Prints GB/s per size (the fastest of 5 passes,
// each a multiple of 512 MiB read) and the ratio to the 256 KiB buffer's rate, measured in the
// same run. Usage: cache_stream_bench [MAX_MIB] (default 256).
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <vector>

namespace {

// 64-byte vectors (GCC/Clang vector extensions: one register on AVX-512, two or four elsewhere).
typedef float Vector __attribute__((vector_size(64)));

// Sums `n` floats (a multiple of 128) in 8 independent vector chains, so the adds' latency never
// bounds the loop even at L1's rate; the result is printed so the reads are not optimized away.
float Sum(const float* data, size_t n) {
  Vector chains[8] = {};
  const Vector* vectors = reinterpret_cast<const Vector*>(data);
  for (size_t i = 0; i + 8 <= n / 16; i += 8) {
    for (int c = 0; c < 8; ++c) chains[c] += vectors[i + c];
  }
  float total = 0;
  for (const Vector& chain : chains) {
    for (int lane = 0; lane < 16; ++lane) total += chain[lane];
  }
  return total;
}

}  // namespace

int main(int argc, char** argv) {
  size_t max_mib = argc > 1 ? std::strtoul(argv[1], nullptr, 10) : 256;
  double baseline = 0;
  float sink = 0;
  std::printf("%10s %8s %8s\n", "buffer", "GB/s", "ratio");
  for (size_t kib = 256; kib <= max_mib * 1024; kib *= 2) {
    size_t n = kib * 1024 / sizeof(float);
    std::vector<Vector> storage(n / 16);  // aligned for the vector loads
    float* data = reinterpret_cast<float*>(storage.data());
    for (size_t i = 0; i < n; ++i) data[i] = static_cast<float>(i % 251);
    size_t passes = std::max<size_t>(1, (size_t{512} << 20) / (kib * 1024));
    double best = 1e30;
    for (int round = 0; round < 5; ++round) {
      auto start = std::chrono::steady_clock::now();
      for (size_t p = 0; p < passes; ++p) sink += Sum(data, n);
      best = std::min(best, std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
    }
    double rate = static_cast<double>(passes) * static_cast<double>(kib) * 1024 / best / 1e9;
    if (baseline == 0) baseline = rate;
    std::printf("%7zu KiB %8.1f %8.2f\n", kib, rate, rate / baseline);
  }
  std::printf("(checksum %g)\n", static_cast<double>(sink));
  return 0;
}
