// ONNX Runtime's per-node profile of a model for bench/layer_compare.py: one intra-op thread,
// the input x[i] = ((i * 7) % 255) / 255 - 0.5 (as ort_latency.js), RUNS profiled runs after one
// warm-up; prints the profile file's path. Usage:
// node ort_profile.js MODEL.onnx RUNS DIMS PREFIX   (DIMS of the first input, e.g. 1x3x224x224)
const ort = require('onnxruntime-node');

async function main() {
  const [model, runsArg, dimsArg, prefix] = process.argv.slice(2);
  const runs = parseInt(runsArg || '20', 10);
  const session = await ort.InferenceSession.create(model, {
    intraOpNumThreads: 1, interOpNumThreads: 1, executionMode: 'sequential',
    graphOptimizationLevel: 'all', enableProfiling: true, profileFilePrefix: prefix});
  const dims = (dimsArg || '1x3x224x224').split('x').map((d) => parseInt(d, 10));
  const data = new Float32Array(dims.reduce((a, b) => a * b, 1));
  for (let i = 0; i < data.length; ++i) data[i] = ((i * 7) % 255) / 255 - 0.5;
  const feeds = {[session.inputNames[0]]: new ort.Tensor('float32', data, dims)};
  for (let i = 0; i <= runs; ++i) await session.run(feeds);
  console.log(session.endProfiling());
}
main().catch((e) => { console.error(e); process.exit(1); });
