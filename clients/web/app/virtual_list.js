// A list of fixed-height rows of which only the visible ones exist in the DOM, so an IR of tens
// of thousands of lines or a trace of hundreds of passes scrolls without freezing the page.

export class VirtualList {
  constructor(container, rowHeight, renderRow) {
    this.container = container;
    this.rowHeight = rowHeight;
    this.renderRow = renderRow;
    this.count = 0;
    this.spacer = document.createElement('div');
    this.spacer.style.position = 'relative';
    container.replaceChildren(this.spacer);
    container.addEventListener('scroll', () => this.paint());
  }

  setCount(count) {
    this.count = count;
    this.spacer.style.height = `${count * this.rowHeight}px`;
    this.paint();
  }

  refresh() { this.paint(); }

  scrollTo(index) {
    this.container.scrollTop = Math.max(0, index * this.rowHeight - this.container.clientHeight / 3);
    this.paint();
  }

  paint() {
    const top = this.container.scrollTop;
    const height = this.container.clientHeight || 600;
    const first = Math.max(0, Math.floor(top / this.rowHeight) - 10);
    const last = Math.min(this.count, Math.ceil((top + height) / this.rowHeight) + 10);
    const rows = [];
    for (let i = first; i < last; ++i) {
      const row = this.renderRow(i);
      row.style.position = 'absolute';
      row.style.top = `${i * this.rowHeight}px`;
      row.style.left = '0';
      row.style.right = '0';
      rows.push(row);
    }
    this.spacer.replaceChildren(...rows);
  }
}
