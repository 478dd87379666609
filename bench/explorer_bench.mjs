// The Explorer's figures on a large model (never a CI gate): a real kilnd and kiln-explorer on
// loopback, Debian's Chromium driven by playwright-core.
//  * gateway overhead: the same trace (IR after every pass) read through the gateway's event
//    stream against `kiln trace --format=json`, alternating, median of RUNS each (ratio);
//  * the page: time from clicking Trace to the first pass on the timeline and to the last,
//    time to interactive after it (click a pass, its side-by-side diff shown), the JS heap.
// node bench/explorer_bench.mjs --build=build --tools=build/browser-tools --model=M.onnx
//   [--input-shape=input=1,3,224,224] [--runs=3]
// (tools: tests/browser/install.sh installs playwright-core there.)
import {execFileSync} from 'node:child_process';
import {createRequire} from 'node:module';
import path from 'node:path';
import {startProcess} from '../tests/browser/processes.mjs';

const args = Object.fromEntries(process.argv.slice(2).map((a) => a.replace(/^--/, '').split(/=(.*)/s).slice(0, 2)));
const runs = Number(args.runs || 3);
const require = createRequire(path.join(path.resolve(args.tools), 'package.json'));
const {chromium} = require('playwright-core');
const children = [];
const DEADLINE_MS = 600_000;
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

async function main() {
  const kilnd = await startProcess(path.join(args.build, 'service/kilnd'),
      ['--listen=127.0.0.1:0', '--metrics-listen=127.0.0.1:0', '--workers=1', '--cache-bytes=0'],
      /^kilnd: grpc=(\S+)/, children, DEADLINE_MS);
  const server = kilnd.match[1];
  // The model reaches the page as an example (a 100 MB file is more than playwright's
  // setInputFiles carries).
  const fs = await import('node:fs');
  const os = await import('node:os');
  const examples = fs.mkdtempSync(path.join(os.tmpdir(), 'kiln-explorer-bench-'));
  fs.symlinkSync(path.resolve(args.model), path.join(examples, 'model.onnx'));
  const gateway = await startProcess(path.join(args.build, 'clients/web/kiln-explorer'),
      ['--listen=127.0.0.1:0', `--server=${server}`, `--examples-dir=${examples}`,
        '--max-upload-bytes=536870912'],
      /^kiln-explorer: http=(\S+)/, children, DEADLINE_MS);
  const url = gateway.match[1];
  const shapeFlags = args['input-shape'] ? [`--input-shape=${args['input-shape']}`] : [];
  const shapeQuery = args['input-shape'] ? `&input_shape=${encodeURIComponent(args['input-shape'])}` : '';

  // Upload once; then alternate CLI and gateway traces of the same compile.
  const bytes = fs.readFileSync(args.model);
  const upload = await (await fetch(`${url}api/models?name=model.onnx`, {method: 'POST', body: bytes})).json();
  const cli = [];
  const viaGateway = [];
  let passes = 0;
  for (let i = 0; i < runs; ++i) {
    let start = performance.now();
    execFileSync(path.join(args.build, 'clients/cli/kiln'),
        ['trace', args.model, `--server=${server}`, '--format=json', ...shapeFlags],
        {maxBuffer: 1 << 30, stdio: ['ignore', 'ignore', 'inherit']});
    cli.push(performance.now() - start);
    start = performance.now();
    const text = await (await fetch(`${url}api/trace?model=${upload.model}${shapeQuery}`)).text();
    viaGateway.push(performance.now() - start);
    passes = (text.match(/^event: pass$/gm) || []).length;
  }

  const browser = await chromium.launch({executablePath: '/usr/bin/chromium',
    args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
      '--disable-background-networking', '--disable-component-update', '--disable-sync',
      '--disable-dev-shm-usage', '--enable-precise-memory-info']});
  const page = await browser.newPage({viewport: {width: 1600, height: 1000}});
  page.setDefaultTimeout(DEADLINE_MS);
  await page.goto(url);
  await page.selectOption('#example-select', 'model.onnx');
  await page.waitForSelector('#trace-button:not([disabled])');
  if (args['input-shape']) {
    const [, dims] = args['input-shape'].split('=');
    await page.fill('.input-shape', dims);
  }
  await page.click('#trace-button');
  await page.waitForSelector('body[data-trace="done"]');
  const marks = await page.evaluate(() => window.kilnExplorer.marks);
  const interactiveStart = Date.now();
  await page.click('#hide-unchanged');
  await page.locator('#timeline .row').nth(3).click();
  await page.waitForFunction(() => window.kilnExplorer.state.pass !== null);
  await page.waitForSelector('#diff-view .code-line');
  const interactive = Date.now() - interactiveStart;
  const heap = await page.evaluate(() => performance.memory.usedJSHeapSize);
  await browser.close();

  console.log(`model ${path.basename(args.model)}: ${passes} passes`);
  console.log(`trace via gateway ${median(viaGateway).toFixed(0)} ms, kiln trace (CLI) ` +
      `${median(cli).toFixed(0)} ms: gateway/CLI ${(median(viaGateway) / median(cli)).toFixed(2)} ` +
      `(median of ${runs}, alternating, kilnd's cache off)`);
  console.log(`page: Trace click -> first pass ${(marks.firstPass - marks.start).toFixed(0)} ms, ` +
      `-> last pass ${(marks.done - marks.start).toFixed(0)} ms; a pass's diff shown ` +
      `${interactive} ms after the click; JS heap ${(heap / 1048576).toFixed(1)} MiB`);
}

main().then(() => { for (const c of children) c.kill('SIGKILL'); process.exit(0); },
    (e) => { console.error(e); for (const c of children) c.kill('SIGKILL'); process.exit(1); });
