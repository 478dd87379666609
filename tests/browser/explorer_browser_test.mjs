// The Kiln Explorer in a real browser: Debian's Chromium driven by playwright-core, against a
// real kilnd and the real kiln-explorer gateway on loopback ports. It opens the bundled example
// CNN, traces it, and checks what a user sees: the timeline's pass count equals the CLI's, a
// pass's diff shows the lines that pass changed, a layer's lines are highlighted in two passes,
// a schedule record steps to its last (verified) step, a second trace compares, the NDJSON
// download holds every event, and bad input (a file that is no ONNX model, a cancelled trace,
// kilnd down) shows a clear message. Screenshots of each view go to --artifacts (in the build
// tree, never the repository). Waits are deadlines, never measurements: the figures printed
// at the end are for the note, not asserted.
//
// node explorer_browser_test.mjs --build=BUILD --source=SRC --tools=TOOLS --artifacts=DIR
import {execFileSync} from 'node:child_process';
import {createRequire} from 'node:module';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import assert from 'node:assert/strict';
import {startProcess} from './processes.mjs';

const args = Object.fromEntries(process.argv.slice(2).map((a) => a.replace(/^--/, '').split('=')));
const require = createRequire(path.join(args.tools, 'package.json'));
const {chromium} = require('playwright-core');

const DEADLINE_MS = 180_000;  // generous: a loaded machine is slow, never wrong
const children = [];
const start = (binary, argv, pattern) => startProcess(binary, argv, pattern, children, DEADLINE_MS);
const work = fs.mkdtempSync(path.join(os.tmpdir(), 'kiln-explorer-test-'));
fs.mkdirSync(args.artifacts, {recursive: true});

function cleanup() {
  for (const child of children) child.kill('SIGKILL');
  fs.rmSync(work, {recursive: true, force: true});
}

async function main() {
  const examples = path.join(work, 'examples');
  fs.mkdirSync(path.join(examples, 'small_cnn'), {recursive: true});
  const model = path.join(examples, 'small_cnn', 'model.onnx');
  execFileSync('/usr/bin/python3', [path.join(args.source, 'examples/make_small_cnn.py'), model]);

  const kilnd = await start(path.join(args.build, 'service/kilnd'),
      ['--listen=127.0.0.1:0', '--metrics-listen=127.0.0.1:0', '--workers=2'],
      /^kilnd: grpc=(\S+)/);
  const server = kilnd.match[1];
  const gateway = await start(path.join(args.build, 'clients/web/kiln-explorer'),
      ['--listen=127.0.0.1:0', `--server=${server}`, `--examples-dir=${examples}`],
      /^kiln-explorer: http=(\S+)/);
  const url = gateway.match[1];

  // The CLI's trace of the same model and options: the pass count the timeline must show.
  const cliEvents = execFileSync(path.join(args.build, 'clients/cli/kiln'),
      ['trace', model, `--server=${server}`, '--input-shape=input=1,3,16,16', '--format=json'],
      {encoding: 'utf8', maxBuffer: 256 << 20})
      .split('\n').filter((line) => line.includes('"pass_name"')).length;
  assert.ok(cliEvents > 20, `the CLI's trace has ${cliEvents} passes`);

  const browser = await chromium.launch({
    executablePath: '/usr/bin/chromium',
    args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
      '--disable-background-networking', '--disable-component-update', '--disable-sync',
      '--disable-dev-shm-usage'],
  });
  const page = await browser.newPage({viewport: {width: 1600, height: 1000}});
  page.setDefaultTimeout(DEADLINE_MS);
  const shot = (name) => page.screenshot({path: path.join(args.artifacts, `${name}.png`), fullPage: true});
  const message = () => page.locator('#message');

  await page.goto(url);
  await page.locator('#kilnd-status', {hasText: 'serving'}).waitFor();

  // A file that is no ONNX model: refused at upload, with a message that says so.
  await page.setInputFiles('#model-file', {name: 'notes.onnx', mimeType: 'application/octet-stream',
    buffer: Buffer.from('these bytes are not an ONNX model')});
  await message().filter({hasText: 'not an ONNX model'}).waitFor();
  await shot('01-bad-upload');

  // The bundled example; its symbolic batch dimension gets a shape field, set to 1.
  await page.selectOption('#example-select', 'small_cnn/model.onnx');
  await page.locator('#model-name', {hasText: 'small_cnn.onnx'}).waitFor();
  assert.equal(await page.inputValue('.input-shape'), '1,3,16,16');

  // A cancelled trace: cancelled before its first event, deterministically.
  await page.evaluate(() => {
    document.getElementById('trace-button').click();
    document.getElementById('cancel-button').click();
  });
  await message().filter({hasText: 'trace cancelled'}).waitFor();

  // The trace: every pass on the timeline, as many as the CLI's.
  await page.click('#trace-button');
  await page.waitForSelector('body[data-trace="done"]');
  const figures = await page.evaluate(() => window.kilnExplorer.marks);
  const events = await page.evaluate(() => window.kilnExplorer.state.trace.events.length);
  assert.equal(events, cliEvents, 'timeline passes = CLI trace passes');
  await page.locator('#pass-count', {hasText: `${cliEvents} passes`}).waitFor();
  await shot('02-timeline');

  // The diff of SimplifyInference: BatchNormalization unpacked into arithmetic.
  await page.fill('#pass-filter', 'SimplifyInference');
  await page.locator('#timeline .row', {hasText: 'SimplifyInference'}).first().click();
  await page.locator('#diff-title', {hasText: 'SimplifyInference'}).waitFor();
  const removed = await page.locator('#diff-view .del').allTextContents();
  const added = await page.locator('#diff-view .add').allTextContents();
  assert.ok(removed.some((l) => l.includes('nn.batch_norm')), `removed lines: ${removed.join('\n')}`);
  assert.ok(added.some((l) => l.includes('multiply(')), `added lines: ${added.join('\n')}`);
  assert.match(await page.textContent('#pass-command'), /^kiln-opt 'small_cnn.onnx' -O3 .*--print-after=SimplifyInference/);
  await shot('03-diff');

  // Provenance: the layer /conv1/Conv highlighted in this pass and in a later one (FuseOps).
  await page.click('.tabs button[data-tab="provenance"]');
  await page.locator('#layer-list .chip', {hasText: /^\/conv1\/Conv$/}).click();
  await page.waitForSelector('#provenance-view .code-line.highlight');
  const linesThen = Number(await page.getAttribute('#layer-report', 'data-lines'));
  assert.ok(linesThen > 0);
  await page.fill('#pass-filter', 'FuseOps');
  await page.locator('#timeline .row', {hasText: 'FuseOps'}).first().click();
  await page.waitForFunction(() => window.kilnExplorer.state.pass?.pass_name === 'FuseOps');
  await page.waitForSelector('#provenance-view .code-line.highlight');
  assert.ok(Number(await page.getAttribute('#layer-report', 'data-lines')) > 0);
  // A highlighted line names its layers when clicked.
  await page.locator('#provenance-view .code-line.highlight').first().click();
  await page.locator('#line-layers .chip', {hasText: /^\/conv1\/Conv$/}).waitFor();
  assert.match(await page.textContent('#provenance-command'), /--print-after=FuseOps/);
  await shot('04-provenance');

  // The schedule record of /conv1/Conv's kernel, stepped to its last step, verified.
  await page.click('.tabs button[data-tab="schedule"]');
  await page.waitForSelector('#schedule-kernels .chip');
  await page.fill('#schedule-selector', '/conv1/Conv');
  await page.click('#schedule-load');
  await page.waitForSelector('body[data-step^="0/"]');
  await page.click('#step-last');
  const step = await page.getAttribute('body', 'data-step');
  const [at, last] = step.split('/').map(Number);
  assert.ok(last > 0 && at === last, `stepped to ${step}`);
  assert.match(await page.textContent('#step-label'), /verified/);
  assert.match(await page.textContent('#schedule-command'), /^kiln schedule 'small_cnn.onnx' '--selector=\/conv1\/Conv' --verify/);
  await shot('05-schedule');
  // The kernel's layers lead back to the provenance view.
  await page.locator('#schedule-layers .chip', {hasText: /^\/conv1\/Conv$/}).waitFor();

  // Two traces side by side: -O2 against the -O3 above, and the IR of one pass diffed across.
  await page.click('.tabs button[data-tab="compare"]');
  await page.click('#compare-button');
  await page.locator('#compare-title', {hasText: 'B:'}).waitFor();
  await page.locator('#compare-timelines .row[data-side="a"]', {hasText: 'FuseOps'}).first().click();
  await page.locator('#compare-title', {hasText: ' vs B '}).waitFor();
  assert.match(await page.textContent('#compare-command-a'), /^kiln-opt 'small_cnn.onnx' -O3 /);
  assert.match(await page.textContent('#compare-command-b'), /^kiln(-opt)? .*'small_cnn.onnx'.* (-O2|--opt-level=2) /);
  await shot('06-compare');

  // Downloads: the NDJSON trace holds one line per event.
  await page.click('.tabs button[data-tab="downloads"]');
  const ndjson = await page.evaluate(async () => {
    const href = document.querySelector('#download-list a').getAttribute('href');
    return (await fetch(href)).text();
  });
  assert.equal(ndjson.trim().split('\n').length, cliEvents);
  await shot('08-downloads');

  // Numeric drift on the timeline: every checked graph pass marked, the native code's in the count.
  await page.fill('#pass-filter', '');
  await page.check('#check-numerics');
  await page.check('#fast-math');
  await page.click('#trace-button');
  await page.waitForSelector('body[data-trace="done"]');
  assert.ok(await page.locator('#timeline .drift').count() > 0);
  assert.equal(await page.locator('#timeline .drift.bad').count(), 0);
  await page.locator('#pass-count', {hasText: 'native code drift: max rel'}).waitFor();
  assert.match(await page.locator('#trace-info').textContent(), / --fast-math/);
  // The native code's kernels, each run on exact inputs: how many computed exactly; those that
  // lost precision (worst first) open their schedule.
  const precision = await page.locator('#kernel-precision').textContent();
  assert.match(precision, /^kernel precision against interp: \d+ of \d+ kernels exact/, precision);
  await page.uncheck('#fast-math');
  await shot('07-drift');
  // With no tolerance, the first pass that changes a bit (SimplifyInference: batch norm unpacked
  // into arithmetic) names the layer where the drift appears, /bn1/BatchNormalization first.
  await page.fill('#drift-tolerance', '0');
  await page.click('#trace-button');
  await page.waitForSelector('body[data-trace="done"]');
  await page.fill('#pass-filter', 'SimplifyInference');
  await page.locator('#timeline .row', {hasText: 'SimplifyInference'}).first().click();
  await page.click('.tabs button[data-tab="provenance"]');
  await page.waitForFunction(() => window.kilnExplorer.state.pass?.pass_name === 'SimplifyInference');
  const attributed = await page.locator('#drift-layers .chip').allTextContents();
  assert.match(attributed[0] || '', /^\/bn1\/BatchNormalization \(rel /, attributed.join(' | '));
  await shot('07b-drift-layers');
  await page.fill('#drift-tolerance', '');
  await page.fill('#pass-filter', '');
  await page.uncheck('#check-numerics');

  // Bisection: the trace cut after 3 passes, then moved one pass later.
  await page.fill('#max-pass-index', '3');
  await page.click('#trace-button');
  await page.waitForSelector('body[data-trace="done"]');
  const cut = await page.evaluate(() => window.kilnExplorer.state.trace.events.length);
  assert.ok(cut < cliEvents, `the cut trace has ${cut} of ${cliEvents} passes`);
  assert.match(await page.textContent('#trace-info'), /--config=pass\.max_pass_index=3/);
  await page.click('#cut-later');
  await page.locator('#trace-info', {hasText: 'pass.max_pass_index=4'}).waitFor();
  await page.waitForSelector('body[data-trace="done"]');
  await page.fill('#max-pass-index', '');

  const memory = await page.evaluate(() => performance.memory ? performance.memory.usedJSHeapSize : -1);

  // kilnd down: the next trace says so.
  kilnd.child.kill('SIGKILL');
  await page.click('#trace-button');
  await message().filter({hasText: 'unavailable'}).waitFor();
  await shot('09-kilnd-down');

  await browser.close();
  console.log(`explorer: ${cliEvents} passes; trace click -> first pass ` +
      `${(figures.firstPass - figures.start).toFixed(0)} ms, -> done ${(figures.done - figures.start).toFixed(0)} ms; ` +
      `JS heap ${(memory / 1048576).toFixed(1)} MiB; screenshots in ${args.artifacts}`);
}

main().then(() => { cleanup(); process.exit(0); },
    (error) => { console.error(error); cleanup(); process.exit(1); });
