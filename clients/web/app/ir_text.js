// IR text as the page shows it: lines with their span comments (`/* si=... */` in graph text,
// `# si=...` in loop script) dimmed, the ONNX layers each line names, and side-by-side rows
// from a unified diff.

const SI = /si=(\[[^\]]*\]|"[^"]*"|[^\s*,\]]+)/g;

// The ONNX layers named in the span comments of one line.
export function layersOfLine(line) {
  const layers = new Set();
  for (const match of line.matchAll(SI)) {
    let value = match[1];
    if (value.startsWith('[')) {
      for (let item of value.slice(1, -1).split(/,\s*/)) {
        item = item.trim();
        if (item.startsWith('"')) item = item.slice(1, -1);
        if (item) layers.add(item);
      }
    } else {
      if (value.startsWith('"')) value = value.slice(1, -1);
      layers.add(value);
    }
  }
  return layers;
}

// A line element: the text, span comments in a dimmer style (text nodes only: IR never
// becomes markup).
export function lineElement(text, className) {
  const div = document.createElement('div');
  div.className = `code-line ${className || ''}`;
  const pattern = /(\/\* si=.*?\*\/|# si=.*$)/g;
  let last = 0;
  for (const match of text.matchAll(pattern)) {
    if (match.index > last) div.append(text.slice(last, match.index));
    const span = document.createElement('span');
    span.className = 'si';
    span.textContent = match[0];
    div.append(span);
    last = match.index + match[0].length;
  }
  if (last < text.length) div.append(text.slice(last));
  return div;
}

// Side-by-side rows of a unified diff: {left, right, kind} where kind is 'hunk', 'same' or
// 'change' (a run of removed lines paired with the added lines after it).
export function sideBySide(diff) {
  const rows = [];
  let removed = [];
  let added = [];
  const flush = () => {
    const n = Math.max(removed.length, added.length);
    for (let i = 0; i < n; ++i) {
      rows.push({left: removed[i], right: added[i], kind: 'change'});
    }
    removed = [];
    added = [];
  };
  for (const line of diff.split('\n')) {
    if (line.startsWith('---') || line.startsWith('+++')) continue;
    if (line.startsWith('@@')) {
      flush();
      rows.push({left: line, right: line, kind: 'hunk'});
    } else if (line.startsWith('-')) {
      removed.push(line.slice(1));
    } else if (line.startsWith('+')) {
      added.push(line.slice(1));
    } else if (line.startsWith(' ')) {
      flush();
      rows.push({left: line.slice(1), right: line.slice(1), kind: 'same'});
    }
  }
  flush();
  return rows;
}

// A VirtualList row for a side-by-side diff row.
export function sideBySideRow(row) {
  const div = document.createElement('div');
  div.className = 'side';
  if (row.kind === 'hunk') {
    div.append(lineElement(row.left, 'hunk'), lineElement(row.right, 'hunk'));
  } else {
    div.append(
        lineElement(row.left ?? '', row.kind === 'change' ? (row.left === undefined ? 'empty' : 'del') : ''),
        lineElement(row.right ?? '', row.kind === 'change' ? (row.right === undefined ? 'empty' : 'add') : ''));
  }
  return div;
}
