#include "Assets.h"

namespace shardc::report {

const char* const kStyle = R"css(
body{font:14px/1.45 system-ui,sans-serif;margin:0 auto;max-width:1000px;padding:16px 24px;color:#222}
h1{font-size:22px;margin:8px 0}h2{font-size:18px;margin:28px 0 8px;border-bottom:1px solid #ddd}
h3{font-size:15px;margin:16px 0 6px}
table{border-collapse:collapse;margin:6px 0}td,th{padding:2px 10px;text-align:left;border-bottom:1px solid #eee}
th{background:#f4f4f4}table.sortable th{cursor:pointer}table.sortable th:after{content:" \21C5";color:#999}
td.n,th.n{text-align:right;font-variant-numeric:tabular-nums}
.muted{color:#777}.note{color:#b00}
svg text{font:12px system-ui,sans-serif;fill:#333}
details{margin:2px 0;border-left:3px solid #ddd;padding-left:8px}summary{cursor:pointer}
summary code{font-size:13px}.members{font:12px monospace;color:#555;word-break:break-all}
.bar{fill:#4e79a7}.bar.comm{fill:#e15759}.bar.chosen{fill:#59a14f}.bar.infeasible{fill:#bbb}
.segment.params,.params{fill:#4e79a7}.segment.state,.state{fill:#f28e2b}
.segment.inputs,.inputs{fill:#76b7b2}.segment.activations,.activations{fill:#edc948}
.segment.measured,.measured{fill:#e15759}
.capacity{stroke:#b00;stroke-width:2;stroke-dasharray:4 3}text.capacity{stroke:none;fill:#b00}
.device rect{fill:#eef3fa;stroke:#4e79a7}.cell-label{text-anchor:middle;font-size:11px}
.axis-label{font-weight:600}
.ax0{fill:#4e79a7;stroke:#4e79a7}.ax1{fill:#e15759;stroke:#e15759}.ax2{fill:#59a14f;stroke:#59a14f}
.ax3{fill:#b07aa1;stroke:#b07aa1}.ax4{fill:#f28e2b;stroke:#f28e2b}.ax5{fill:#9c755f;stroke:#9c755f}
text.ax0,text.ax1,text.ax2,text.ax3,text.ax4,text.ax5{stroke:none}
.box{fill:#fafafa;stroke:#333;stroke-width:1.2}.layer{fill:#f0f0f0;stroke:#999}.layer.split{stroke-width:2}
.layer.split.ax0{stroke:#4e79a7}.layer.split.ax1{stroke:#e15759}.layer.split.ax2{stroke:#59a14f}
.layer.split.ax3{stroke:#b07aa1}.layer.split.ax4{stroke:#f28e2b}.layer.split.ax5{stroke:#9c755f}
.mine{fill:#4e79a7;fill-opacity:.25}
line.cut{stroke-width:2}line.cut.chunk{stroke:#000;stroke-dasharray:3 2}
text.dim.split{font-weight:600}
.chip{color:#fff;border-radius:3px;padding:0 5px;margin-left:6px;font-size:12px}
.chip.ax0{background:#4e79a7}.chip.ax1{background:#e15759}.chip.ax2{background:#59a14f}
.chip.ax3{background:#b07aa1}.chip.ax4{background:#f28e2b}.chip.ax5{background:#9c755f}
.curve polyline{fill:none;stroke-width:1.6}.axes line{stroke:#888}
.loss{stroke:#4e79a7;fill:#4e79a7}.eval-loss{stroke:#e15759;fill:#e15759}.throughput{stroke:#59a14f;fill:#59a14f}
.legend .swatch{stroke:none}
.span{stroke:#fff;stroke-width:.5}.span.body{stroke:#000;stroke-width:1.5}
.forward{fill:#4e79a7}.backward{fill:#e15759}.grad-reduce{fill:#b07aa1}.optimizer{fill:#59a14f}
.legend-row span{display:inline-block;width:10px;height:10px;margin:0 4px 0 12px}
.legend-row span.forward{background:#4e79a7}.legend-row span.backward{background:#e15759}
.legend-row span.grad-reduce{background:#b07aa1}.legend-row span.optimizer{background:#59a14f}
.legend-row span.body{border:2px solid #000;width:8px;height:8px}
.legend-row span.ax0{background:#4e79a7}.legend-row span.ax1{background:#e15759}.legend-row span.ax2{background:#59a14f}
.legend-row span.ax3{background:#b07aa1}.legend-row span.ax4{background:#f28e2b}.legend-row span.ax5{background:#9c755f}
)css";

// Sortable tables: a click on a header sorts by that column (numbers by their data-v), again
// to reverse; each table starts sorted by the column marked data-sort.
const char* const kScript = R"js(
function sortTable(th, descending) {
  const table = th.closest('table'), body = table.tBodies[0];
  const col = Array.prototype.indexOf.call(th.parentNode.children, th);
  const key = r => { const c = r.cells[col]; return c.dataset.v !== undefined ? parseFloat(c.dataset.v) : c.textContent; };
  const rows = Array.from(body.rows);
  rows.sort((a, b) => { const x = key(a), y = key(b);
    const o = typeof x === 'number' ? x - y : String(x).localeCompare(String(y));
    return descending ? -o : o; });
  rows.forEach(r => body.appendChild(r));
  table.querySelectorAll('th').forEach(h => delete h.dataset.dir);
  th.dataset.dir = descending ? 'desc' : 'asc';
}
document.querySelectorAll('table.sortable th').forEach(th => {
  th.addEventListener('click', () => sortTable(th, th.dataset.dir !== 'desc'));
  if (th.dataset.sort) sortTable(th, th.dataset.sort === 'desc');
});
document.querySelectorAll('button.expand').forEach(b => b.addEventListener('click', () => {
  const open = b.dataset.open !== '1';
  b.closest('section').querySelectorAll('details').forEach(d => { d.open = open; });
  b.dataset.open = open ? '1' : '0';
  b.textContent = open ? 'collapse all' : 'expand all';
}));
// When the page became usable, for the tests and bench/report_page.py.
document.body.dataset.ready = '1';
document.body.dataset.readyMs = String(Math.round(performance.now()));
)js";

} // namespace shardc::report
