// ONNX Runtime's latency on a model for bench/native_bench.cc: one intra-op thread, the input
// native_bench uses (x[i] = ((i * 7) % 255) / 255 - 0.5), one warm-up run, then the median of
// RUNS runs in milliseconds on the first line of stdout, the first output's values (JSON) on the
// second, so the caller can check its own numerics against ONNX Runtime's. Usage:
// node ort_latency.js MODEL.onnx RUNS [DIMS]   (DIMS of the first input, e.g. 1x128x256;
// default 1x3x224x224)
const ort = require('onnxruntime-node');

async function main() {
  const [model, runsArg, dimsArg] = process.argv.slice(2);
  const runs = parseInt(runsArg || '20', 10);
  const session = await ort.InferenceSession.create(model, {
    intraOpNumThreads: 1, interOpNumThreads: 1, executionMode: 'sequential',
    graphOptimizationLevel: 'all'});
  const name = session.inputNames[0];
  const dims = (dimsArg || '1x3x224x224').split('x').map((d) => parseInt(d, 10));
  const data = new Float32Array(dims.reduce((a, b) => a * b, 1));
  for (let i = 0; i < data.length; ++i) data[i] = ((i * 7) % 255) / 255 - 0.5;
  const feeds = {[name]: new ort.Tensor('float32', data, dims)};
  const results = await session.run(feeds);
  const output = results[session.outputNames[0]].data;
  const times = [];
  for (let i = 0; i < runs; ++i) {
    const start = process.hrtime.bigint();
    await session.run(feeds);
    times.push(Number(process.hrtime.bigint() - start) / 1e6);
  }
  times.sort((a, b) => a - b);
  console.log(times[Math.floor(times.length / 2)].toFixed(3));
  console.log(JSON.stringify(Array.from(output)));
}
main().catch((e) => { console.error(e); process.exit(1); });
