// Calls to the gateway's HTTP/JSON API (docs/explorer.md). Every error becomes an Error whose
// message is the gateway's (or kilnd's) own, e.g. "INVALID_ARGUMENT: not an ONNX model: ...".

export class ApiError extends Error {}

export async function getJson(url, init) {
  let response;
  try {
    response = await fetch(url, init);
  } catch (e) {
    throw new ApiError(`the gateway is unreachable (${e.message})`);
  }
  const text = await response.text();
  let body;
  try {
    body = JSON.parse(text);
  } catch (e) {
    throw new ApiError(`HTTP ${response.status}: ${text.slice(0, 200)}`);
  }
  if (!response.ok || body.error) {
    const error = body.error || {code: `HTTP ${response.status}`, message: text.slice(0, 200)};
    throw new ApiError(`${error.code}: ${error.message}`);
  }
  return body;
}

// Query parameters of the compile options the page holds (see compile_options.h).
export function optionQuery(options) {
  const query = new URLSearchParams();
  if (options.model) query.set('model', options.model);
  if (options.optLevel !== undefined && options.optLevel !== '') query.set('opt_level', options.optLevel);
  if (options.pipeline) query.set('pipeline', options.pipeline);
  if (options.disabled) query.set('disable', options.disabled);
  for (const entry of (options.config || '').split(';').map((s) => s.trim()).filter(Boolean)) {
    query.append('config', entry);
  }
  if (options.maxPassIndex !== undefined && options.maxPassIndex !== '') {
    query.set('max_pass_index', options.maxPassIndex);
  }
  if (options.stages) query.set('stages', options.stages);
  for (const shape of options.inputShapes || []) query.append('input_shape', shape);
  if (options.fastMath) query.set('fast_math', '1');
  if (options.checkNumerics) query.set('check_numerics', '1');
  if (options.checkNumerics && options.driftTolerance) {
    query.set('numerics_rtol', options.driftTolerance);
    query.set('numerics_atol', options.driftTolerance);
  }
  return query;
}

export async function uploadFile(file) {
  const body = await file.arrayBuffer();
  return getJson(`/api/models?name=${encodeURIComponent(file.name)}`, {method: 'POST', body});
}

export async function uploadExample(name) {
  return getJson(`/api/models?example=${encodeURIComponent(name)}`, {method: 'POST'});
}

// Starts a trace; `handlers` get start / pass / done / error / lost. Returns the EventSource
// (close() cancels the trace: the gateway then cancels kilnd's compile).
export function startTrace(options, handlers) {
  const source = new EventSource(`/api/trace?${optionQuery(options)}`);
  let finished = false;
  source.addEventListener('start', (e) => handlers.start(JSON.parse(e.data)));
  source.addEventListener('pass', (e) => handlers.pass(JSON.parse(e.data)));
  source.addEventListener('done', (e) => {
    finished = true;
    source.close();
    handlers.done(JSON.parse(e.data));
  });
  source.addEventListener('error', (e) => {
    if (e.data) {  // an error event the gateway sent (kilnd's status)
      finished = true;
      source.close();
      const error = JSON.parse(e.data);
      handlers.error(`${error.code}: ${error.message}`);
    } else if (!finished) {  // the connection itself failed or dropped
      finished = true;
      source.close();
      handlers.error('lost the connection to the gateway during the trace');
    }
  });
  return source;
}
