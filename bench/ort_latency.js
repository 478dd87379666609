// ONNX Runtime's latency on a model for bench/native_bench.cc: one intra-op thread, the input
// native_bench uses (x[i] = ((i * 7) % 255) / 255 - 0.5), one warm-up run, then the median of
// RUNS runs in milliseconds on the first line of stdout, the first output's values (JSON) on the
// second, so the caller can check its own numerics against ONNX Runtime's. Usage:
// node ort_latency.js MODEL.onnx RUNS [DIMS]   (DIMS of the first input, e.g. 1x128x256;
// default 1x3x224x224)
// With RUNS `-` (bench/models_bench.py): after the output line, `ready`, then one `median MS` line
// per run count read from stdin (one per line), so a caller can interleave these runs with
// Kiln's (`kiln-run --benchmark_requests`) in one timeline.
const ort = require('onnxruntime-node');

async function main() {
  const [model, runsArg, dimsArg] = process.argv.slice(2);
  const requests = runsArg === '-';
  const runs = requests ? 0 : parseInt(runsArg || '20', 10);
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
  const median = async (n) => {
    const times = [];
    for (let i = 0; i < n; ++i) {
      const start = process.hrtime.bigint();
      await session.run(feeds);
      times.push(Number(process.hrtime.bigint() - start) / 1e6);
    }
    times.sort((a, b) => a - b);
    return times[Math.floor(times.length / 2)];
  };
  if (!requests) {
    console.log((await median(runs)).toFixed(3));
    console.log(JSON.stringify(Array.from(output)));
    return;
  }
  process.stdout.write(JSON.stringify(Array.from(output)) + '\nready\n');
  const lines = require('readline').createInterface({input: process.stdin});
  for await (const line of lines) {
    const n = parseInt(line, 10);
    if (!(n > 0)) throw new Error(`expected a run count, got '${line}'`);
    process.stdout.write(`median ${(await median(n)).toFixed(4)}\n`);
  }
}
main().catch((e) => { console.error(e); process.exit(1); });
