// The pass timeline: one row per pass event (stage, name indented by nesting depth, a bar as
// long as its duration relative to the slowest pass, a mark on passes that changed the IR, the
// number of ONNX layers that vanished in it), a name filter and "hide unchanged".
import {VirtualList} from './virtual_list.js';

export class Timeline {
  constructor(container, onSelect) {
    this.events = [];
    this.shown = [];
    this.filter = '';
    this.hideUnchanged = false;
    this.selected = -1;
    this.onSelect = onSelect;
    this.list = new VirtualList(container, 20, (i) => this.row(i));
  }

  reset() {
    this.events = [];
    this.selected = -1;
    this.update();
  }

  add(event) {
    this.events.push(event);
    this.update();
  }

  setFilter(filter, hideUnchanged) {
    this.filter = filter.toLowerCase();
    this.hideUnchanged = hideUnchanged;
    this.update();
  }

  update() {
    this.shown = this.events.filter((e) =>
      (!this.hideUnchanged || e.changed) && e.pass_name.toLowerCase().includes(this.filter));
    this.maxMs = Math.max(1e-6, ...this.events.map((e) => e.duration_ms));
    this.list.setCount(this.shown.length);
  }

  select(index) {
    this.selected = index;
    this.list.refresh();
    this.onSelect(this.events.find((e) => e.index === index));
  }

  row(i) {
    const event = this.shown[i];
    const row = document.createElement('div');
    row.className = `row stage-${event.stage}${event.changed ? ' changed' : ''}` +
        `${event.index === this.selected ? ' selected' : ''}`;
    row.dataset.index = event.index;
    const stage = document.createElement('span');
    stage.className = 'stage';
    stage.textContent = event.stage;
    const name = document.createElement('span');
    name.className = 'name';
    name.textContent = `${'\u00a0'.repeat(2 * event.depth)}#${event.index} ${event.pass_name}`;
    name.title = `${event.pass_name}: ${event.duration_ms.toFixed(3)} ms` +
        (event.changed ? ', changed the IR' : ', no change');
    const bar = document.createElement('span');
    bar.className = 'bar';
    bar.style.width = `${Math.max(1, 120 * event.duration_ms / this.maxMs)}px`;
    const ms = document.createElement('span');
    ms.className = 'muted';
    ms.textContent = `${event.duration_ms.toFixed(2)} ms`;
    row.append(stage, name, bar, ms);
    if (event.numerics) {
      // Numeric drift after the pass against the model as imported (check_numerics).
      const drift = document.createElement('span');
      const error = event.numerics.error ? NaN : Number(event.numerics.max_rel_error);
      drift.className = `drift${error > 1e-4 || event.numerics.error ? ' bad' : ''}`;
      drift.textContent = event.numerics.error ? 'drift ?' : `\u0394${error.toExponential(0)}`;
      drift.title = event.numerics.error ? event.numerics.error :
          `largest relative error of the outputs after this pass: ${error} (${event.numerics.backend})`;
      row.append(drift);
    }
    if (event.layers_gone && event.layers_gone.length) {
      const gone = document.createElement('span');
      gone.className = 'gone';
      gone.textContent = `-${event.layers_gone.length} layers`;
      gone.title = event.layers_gone.join(', ');
      row.append(gone);
    }
    row.addEventListener('click', () => this.select(event.index));
    return row;
  }
}
