// The Kiln Explorer page: open a model, trace it through the gateway, and follow it pass by
// pass (timeline, side-by-side diffs, ONNX-layer provenance, schedule records, a second trace to
// compare, downloads). State lives here; the views are in timeline.js, ir_text.js and
// virtual_list.js; every call to the gateway is in api.js.
import {getJson, optionQuery, startTrace, uploadExample, uploadFile} from './api.js';
import {layersOfLine, lineElement, sideBySide, sideBySideRow} from './ir_text.js';
import {Timeline} from './timeline.js';
import {VirtualList} from './virtual_list.js';

const $ = (id) => document.getElementById(id);

const state = {
  model: null,      // {model, name, bytes, inputs}
  trace: null,      // {id, options, events, done}
  source: null,     // the live EventSource
  pass: null,       // the selected pass's IR (GET /api/traces/T/passes/N)
  layer: null,      // the selected ONNX layer
  record: null,     // the loaded schedule record
  step: 0,
  traceB: null,     // the second trace of the Compare tab
};

// Figures the browser test reads (docs/explorer.md): when the trace started, when its first pass
// appeared, when it finished.
window.kilnExplorer = {state, marks: {}};

function showMessage(text, kind = 'error') {
  const box = $('message');
  box.textContent = text;
  box.className = kind === 'info' ? 'info' : '';
  box.hidden = false;
}

function clearMessage() { $('message').hidden = true; }

// ---- kilnd, examples, the model -------------------------------------------------------------

async function refreshHealth() {
  try {
    const health = await getJson('/api/health');
    $('kilnd-status').textContent = `kilnd ${health.kilnd}: ${health.serving ? 'serving' : 'unavailable'}`;
    if (!health.serving) showMessage(`kilnd is not answering: ${health.message}`);
  } catch (e) {
    $('kilnd-status').textContent = 'gateway unreachable';
    showMessage(e.message);
  }
}

async function loadExamples() {
  try {
    for (const example of await getJson('/api/examples')) {
      const option = document.createElement('option');
      option.value = example.name;
      option.textContent = `${example.name} (${example.bytes} bytes)`;
      $('example-select').append(option);
    }
  } catch (e) {
    showMessage(e.message);
  }
}

function setModel(body) {
  state.model = body;
  $('model-name').textContent = `${body.name} (${body.bytes} bytes, id ${body.model})`;
  // Inputs with symbolic dimensions need a shape: a field each, the symbols set to 1.
  const shapes = $('input-shapes');
  shapes.replaceChildren();
  for (const input of body.inputs || []) {
    if (!input.dims.some((d) => d.param !== undefined)) continue;
    const label = document.createElement('label');
    label.textContent = `shape of ${input.name} `;
    const field = document.createElement('input');
    field.className = 'input-shape';
    field.dataset.name = input.name;
    field.value = input.dims.map((d) => (d.value !== undefined ? d.value : 1)).join(',');
    field.title = `declared ${input.dims.map((d) => d.value ?? d.param).join(' x ')}`;
    label.append(field);
    shapes.append(label);
  }
  $('trace-button').disabled = false;
}

async function openModel(upload) {
  clearMessage();
  $('trace-button').disabled = true;
  try {
    setModel(await upload());
  } catch (e) {
    state.model = null;
    $('model-name').textContent = 'no model';
    showMessage(`cannot open the model: ${e.message}`);
  }
}

function currentOptions() {
  return {
    model: state.model.model,
    optLevel: $('opt-level').value,
    pipeline: $('pipeline').value.trim(),
    disabled: $('disabled').value.trim(),
    config: $('config').value.trim(),
    maxPassIndex: $('max-pass-index').value.trim(),
    stages: $('stage-llvm').checked ? 'graph,loop,llvm' : '',
    fastMath: $('fast-math').checked,
    checkNumerics: $('check-numerics').checked,
    driftTolerance: $('drift-tolerance').value.trim(),
    inputShapes: [...document.querySelectorAll('.input-shape')].map(
        (f) => `${f.dataset.name}=${f.value.trim()}`),
  };
}

// ---- the trace ------------------------------------------------------------------------------

const timeline = new Timeline($('timeline'), (event) => selectPass(event));

function runTrace() {
  clearMessage();
  if (state.source) state.source.close();
  const options = currentOptions();
  state.trace = {id: null, options, events: [], done: false};
  state.pass = null;
  timeline.reset();
  document.body.dataset.trace = 'running';
  $('cancel-button').disabled = false;
  const marks = window.kilnExplorer.marks = {start: performance.now()};
  state.source = startTrace(options, {
    start(body) {
      state.trace.id = body.trace;
      $('trace-info').textContent = body.command;
    },
    pass(event) {
      if (marks.firstPass === undefined) marks.firstPass = performance.now();
      state.trace.events.push(event);
      timeline.add(event);
      $('pass-count').textContent = `${state.trace.events.length} passes`;
    },
    done(body) {
      marks.done = performance.now();
      state.trace.done = true;
      state.source = null;
      $('cancel-button').disabled = true;
      document.body.dataset.trace = 'done';
      $('pass-count').textContent = `${state.trace.events.length} passes, compile ${body.compile_id.slice(0, 12)}` +
          (body.native_numerics ? `; native code drift: ${driftText(body.native_numerics)}` : '');
      updateDownloads();
      listKernels();
      showKernelPrecision(body.native_numerics);
    },
    error(message) {
      state.source = null;
      $('cancel-button').disabled = true;
      document.body.dataset.trace = 'failed';
      showMessage(`the trace failed: ${message}`);
    },
  });
}

function cancelTrace() {
  if (!state.source) return;
  state.source.close();  // the gateway sees the stream close and cancels kilnd's compile
  state.source = null;
  $('cancel-button').disabled = true;
  document.body.dataset.trace = 'cancelled';
  showMessage(`trace cancelled after ${state.trace.events.length} passes`, 'info');
}

// "max rel 1.2e-7 (interp)" for a drift report (or why it was not checked).
function driftText(drift) {
  if (drift.error) return `not checked: ${drift.error}`;
  return `max rel ${Number(drift.max_rel_error).toExponential(1)} (${drift.backend})`;
}

// ---- one pass: diff and provenance ----------------------------------------------------------

const diffList = new VirtualList($('diff-view'), 16, (i) => diffRow(i));
let diffRows = [];
let diffIsFull = false;

function diffRow(i) {
  return diffIsFull ? lineElement(diffRows[i]) : sideBySideRow(diffRows[i]);
}

async function selectPass(event) {
  if (!event || !state.trace.id) return;
  try {
    state.pass = await getJson(`/api/traces/${state.trace.id}/passes/${event.index}`);
  } catch (e) {
    showMessage(e.message);
    return;
  }
  state.pass.event = event;
  renderDiff();
  renderProvenance();
}

function renderDiff() {
  const pass = state.pass;
  if (!pass) return;
  $('pass-command').textContent = pass.command || '';
  diffIsFull = $('show-full').checked || !pass.diff;
  let title = `#${pass.index} ${pass.pass_name} (${pass.stage})`;
  if (pass.ir_omitted) {
    title += ': its IR was left out (larger than kilnd\'s or the gateway\'s bound)';
  } else if (!pass.diff && pass.before_label) {
    title += pass.changed ? ': same text as before' : ': no change';
  } else if (!diffIsFull) {
    title += `: ${pass.before_label} -> ${pass.after_label}`;
  }
  $('diff-title').textContent = title;
  diffRows = diffIsFull ? pass.ir_after.split('\n') : sideBySide(pass.diff);
  diffList.setCount(diffRows.length);
  diffList.container.scrollTop = 0;
}

const provenanceList = new VirtualList($('provenance-view'), 16, (i) => provenanceRow(i));
let provenanceLines = [];

function provenanceRow(i) {
  const text = provenanceLines[i];
  const row = lineElement(text, state.layer && layersOfLine(text).has(state.layer) ? 'highlight' : '');
  row.addEventListener('click', () => showLineLayers(text));
  return row;
}

function chip(text, onClick, extra = '') {
  const element = document.createElement('span');
  element.className = `chip ${extra}`;
  element.textContent = text;
  element.addEventListener('click', onClick);
  return element;
}

function renderProvenance() {
  const pass = state.pass;
  if (!pass) return;
  $('provenance-command').textContent = pass.command || '';
  const gone = pass.event.layers_gone || [];
  $('layer-list').replaceChildren(
      ...pass.layers.map((layer) => chip(layer, () => selectLayer(layer),
          layer === state.layer ? 'active' : '')),
      ...gone.map((layer) => chip(layer, () => selectLayer(layer), 'gone')));
  // The first pass over the drift tolerance names the layers whose values it changed.
  const attributed = pass.event.numerics?.layers || [];
  $('drift-layers').replaceChildren(...(attributed.length ? [
    document.createTextNode('numeric drift appears in: '),
    ...attributed.map((entry) => chip(
        `${entry.layers.join(', ')} (rel ${Number(entry.max_rel_error).toExponential(1)})`,
        () => selectLayer(entry.layers[0]), 'drifted')),
  ] : []));
  provenanceLines = pass.ir_after.split('\n');
  provenanceList.setCount(provenanceLines.length);
  reportLayer();
}

function showLineLayers(text) {
  const layers = [...layersOfLine(text)];
  $('line-layers').replaceChildren(
      document.createTextNode(layers.length ? 'this line comes from: ' : 'this line names no layer'),
      ...layers.map((layer) => chip(layer, () => selectLayer(layer))));
}

function selectLayer(layer) {
  state.layer = layer;
  document.body.dataset.layer = layer;
  renderProvenance();
  const first = provenanceLines.findIndex((line) => layersOfLine(line).has(layer));
  if (first >= 0) provenanceList.scrollTo(first);
}

// Where the selected layer is in this pass, and in which passes it vanished or came back.
function reportLayer() {
  const layer = state.layer;
  if (!layer) {
    $('layer-report').textContent = '';
    return;
  }
  const lines = provenanceLines.filter((line) => layersOfLine(line).has(layer)).length;
  const history = [];
  for (const event of state.trace.events) {
    if ((event.layers_gone || []).includes(layer)) history.push(`vanished in #${event.index} ${event.pass_name}`);
    if ((event.layers_added || []).includes(layer) && event.index > state.trace.events[0].index) {
      history.push(`appears in #${event.index} ${event.pass_name}`);
    }
  }
  $('layer-report').textContent =
      `${layer}: ${lines} line${lines === 1 ? '' : 's'} of this pass's IR` +
      (history.length ? `; ${history.join('; ')}` : '; present in every pass with spans');
  $('layer-report').dataset.lines = lines;
}

const assemblyList = new VirtualList($('assembly-view'), 16, (i) => lineElement(assemblyLines[i], 'highlight'));
let assemblyLines = [];

async function loadAssembly() {
  if (!state.layer || !state.model) {
    showMessage('select a layer first', 'info');
    return;
  }
  const query = optionQuery(state.trace.options);
  query.set('kind', 'assembly');
  const response = await fetch(`/api/artifact?${query}`);
  const text = await response.text();
  if (!response.ok) {
    showMessage(`no assembly: ${text}`);
    return;
  }
  // Each instruction ends with "# model.loop.py:LINE [layer, layer, ...]".
  const layer = state.layer;
  assemblyLines = text.split('\n').filter((line) => {
    const match = line.match(/\[([^\]]*)\]\s*$/);
    return match && match[1].split(/,\s*/).includes(layer);
  });
  assemblyList.setCount(assemblyLines.length);
  $('load-assembly').textContent = `assembly lines of this layer: ${assemblyLines.length}`;
}

// ---- schedule records -----------------------------------------------------------------------

const stepList = new VirtualList($('step-view'), 16, (i) => stepRow(i));
let stepRows = [];
let stepIsFull = true;

function stepRow(i) { return stepIsFull ? lineElement(stepRows[i]) : sideBySideRow(stepRows[i]); }

// With numeric drift: the native code's kernels that lost precision on their own (each run on
// exact inputs), worst first; a click opens the kernel's schedule.
function showKernelPrecision(numerics) {
  const view = $('kernel-precision');
  if (!numerics || (!numerics.kernels && !numerics.kernels_error)) {
    view.replaceChildren();
    return;
  }
  if (numerics.kernels_error) {
    view.replaceChildren(document.createTextNode(`kernel precision not checked: ${numerics.kernels_error}`));
    return;
  }
  const lossy = numerics.kernels.filter((k) => Number(k.max_abs_error || 0) > 0)
      .sort((a, b) => Number(b.max_rel_error || 0) - Number(a.max_rel_error || 0));
  const heading = `kernel precision against ${numerics.kernels_reference}: ` +
      `${numerics.kernels.length - lossy.length} of ${numerics.kernels.length} kernels exact` +
      (lossy.length ? '; lost precision:' : '');
  view.replaceChildren(document.createTextNode(heading), ...lossy.slice(0, 12).map((kernel) => {
    const item = chip(`${kernel.kernel} ${Number(kernel.max_rel_error || 0).toExponential(1)}`, () => {
      $('schedule-selector').value = kernel.kernel;
      loadRecord();
    }, 'kernel-drift');
    item.title = `${(kernel.layers || []).join(', ')}: max rel ${kernel.max_rel_error}, ` +
        `max abs ${kernel.max_abs_error}`;
    return item;
  }));
}

async function listKernels() {
  const lastLoop = [...state.trace.events].reverse().find((e) => e.stage === 'loop' && e.has_ir);
  if (!lastLoop) return;
  try {
    const pass = await getJson(`/api/traces/${state.trace.id}/passes/${lastLoop.index}`);
    const kernels = [...pass.ir_after.matchAll(/def (fused_\w+)\(/g)].map((m) => m[1]);
    $('schedule-kernels').replaceChildren(...kernels.map((kernel) => chip(kernel, () => {
      $('schedule-selector').value = kernel;
      loadRecord();
    })));
  } catch (e) {
    showMessage(e.message);
  }
}

async function loadRecord() {
  const selector = $('schedule-selector').value.trim();
  if (!selector || !state.model) return;
  const query = optionQuery(state.trace ? state.trace.options : currentOptions());
  query.set('selector', selector);
  $('step-label').textContent = 'loading (every step verified)...';
  try {
    state.record = await getJson(`/api/schedule?${query}`);
  } catch (e) {
    $('step-label').textContent = 'no record';
    showMessage(e.message);
    return;
  }
  $('schedule-command').textContent = state.record.command;
  // The ONNX layers the kernel computes: each opens the provenance view on that layer.
  $('schedule-layers').replaceChildren(
      document.createTextNode(`${state.record.kernel} computes: `),
      ...state.record.spans.map((layer) => chip(layer, () => {
        document.querySelector('.tabs button[data-tab="provenance"]').click();
        selectLayer(layer);
      })));
  showStep(0);
}

function showStep(step) {
  const record = state.record;
  if (!record) return;
  state.step = Math.max(0, Math.min(step, record.steps.length - 1));
  const current = record.steps[state.step];
  const verified = current.verified === undefined ? '' : current.verified ? ' \u2713 verified' : ' \u2717 NOT verified';
  const label = $('step-label');
  label.textContent = `${record.kernel} step ${state.step}/${record.steps.length - 1}: ` +
      `${current.primitive}(${current.arguments.join(', ')})${verified}`;
  label.className = current.verified === false ? 'unverified' : current.verified ? 'verified' : 'muted';
  document.body.dataset.step = `${state.step}/${record.steps.length - 1}`;
  stepIsFull = state.step === 0 || !current.diff;
  stepRows = stepIsFull ? current.loop_ir.split('\n') : sideBySide(current.diff);
  stepList.setCount(stepRows.length);
}

// Bisection: move the cut (max pass index) and trace again; from no cut, start below the number of
// passes that ran.
function moveCut(delta) {
  if (!state.model) return;
  const field = $('max-pass-index');
  const current = field.value.trim() === '' ? (state.trace ? state.trace.events.length : 0) : Number(field.value);
  field.value = Math.max(0, current + delta);
  runTrace();
}

// ---- a second trace to compare --------------------------------------------------------------

function runTraceB() {
  if (!state.trace || !state.model) {
    showMessage('trace a model first', 'info');
    return;
  }
  const options = {...state.trace.options, optLevel: $('b-opt-level').value,
    disabled: $('b-disabled').value.trim(), config: $('b-config').value.trim()};
  state.traceB = {id: null, options, events: []};
  startTrace(options, {
    start(body) { state.traceB.id = body.trace; },
    pass(event) { state.traceB.events.push(event); },
    done() { renderCompare(); },
    error(message) { showMessage(`trace B failed: ${message}`); },
  });
}

function compareColumn(events, side) {
  const column = document.createElement('div');
  for (const [k, event] of events.entries()) {
    const row = document.createElement('div');
    row.className = `row stage-${event.stage}${event.changed ? ' changed' : ''}`;
    row.textContent = `#${event.index} ${event.stage} ${event.pass_name} ${event.duration_ms.toFixed(2)} ms`;
    row.addEventListener('click', () => compareAt(k));
    row.dataset.side = side;
    column.append(row);
  }
  return column;
}

function renderCompare() {
  $('compare-timelines').replaceChildren(
      compareColumn(state.trace.events, 'a'), compareColumn(state.traceB.events, 'b'));
  $('compare-title').textContent =
      `A: ${state.trace.events.length} passes, B: ${state.traceB.events.length} passes; click a row to diff A and B after it`;
}

const compareList = new VirtualList($('compare-view'), 16, (i) => sideBySideRow(compareRows[i]));
let compareRows = [];

async function compareAt(k) {
  const a = state.trace.events[Math.min(k, state.trace.events.length - 1)];
  const b = state.traceB.events[Math.min(k, state.traceB.events.length - 1)];
  try {
    const body = await getJson(`/api/diff?a=${state.trace.id}:${a.index}&b=${state.traceB.id}:${b.index}`);
    $('compare-title').textContent = `A ${body.a_label} vs B ${body.b_label}` + (body.diff ? '' : ': same text');
    $('compare-command-a').textContent = body.a_command;
    $('compare-command-b').textContent = body.b_command;
    compareRows = sideBySide(body.diff);
    compareList.setCount(compareRows.length);
  } catch (e) {
    showMessage(e.message);
  }
}

// ---- downloads ------------------------------------------------------------------------------

function updateDownloads() {
  const items = [];
  const link = (href, text) => {
    const li = document.createElement('li');
    const a = document.createElement('a');
    a.href = href;
    a.textContent = text;
    a.setAttribute('download', '');
    li.append(a);
    items.push(li);
  };
  link(`/api/traces/${state.trace.id}/events.ndjson`, 'the trace (NDJSON, one event per line)');
  for (const kind of ['graph_ir_text', 'loop_ir', 'assembly', 'llvm_ir', 'header', 'object',
    'provenance_json', 'metadata_json']) {
    const query = optionQuery(state.trace.options);
    query.set('kind', kind);
    link(`/api/artifact?${query}`, kind);
  }
  $('download-list').replaceChildren(...items);
}

// ---- wiring ---------------------------------------------------------------------------------

for (const button of document.querySelectorAll('.tabs button')) {
  button.addEventListener('click', () => {
    for (const other of document.querySelectorAll('.tabs button')) other.classList.remove('active');
    button.classList.add('active');
    for (const tab of document.querySelectorAll('.tab')) tab.hidden = tab.id !== `tab-${button.dataset.tab}`;
    diffList.refresh();
    provenanceList.refresh();
    stepList.refresh();
  });
}
$('model-file').addEventListener('change', (e) => {
  const file = e.target.files[0];
  if (file) openModel(() => uploadFile(file));
});
$('example-select').addEventListener('change', (e) => {
  if (e.target.value) openModel(() => uploadExample(e.target.value));
});
$('trace-button').addEventListener('click', runTrace);
$('cancel-button').addEventListener('click', cancelTrace);
$('pass-filter').addEventListener('input', () => timeline.setFilter($('pass-filter').value, $('hide-unchanged').checked));
$('hide-unchanged').addEventListener('change', () => timeline.setFilter($('pass-filter').value, $('hide-unchanged').checked));
$('show-full').addEventListener('change', renderDiff);
$('copy-command').addEventListener('click', () => navigator.clipboard?.writeText($('pass-command').textContent));
$('load-assembly').addEventListener('click', loadAssembly);
$('schedule-load').addEventListener('click', loadRecord);
$('step-first').addEventListener('click', () => showStep(0));
$('step-prev').addEventListener('click', () => showStep(state.step - 1));
$('step-next').addEventListener('click', () => showStep(state.step + 1));
$('step-last').addEventListener('click', () => showStep(Infinity));
$('compare-button').addEventListener('click', runTraceB);
$('cut-earlier').addEventListener('click', () => moveCut(-1));
$('cut-later').addEventListener('click', () => moveCut(1));

refreshHealth();
loadExamples();
