// Trends: the base-side medians of one key on one host, in git (or
// measured) order or over time, with the change points found.
import { $, badge, cell, commitEl, fmtDate, fmtP, fmtPct, fmtSI, getJSON, h, num, ready, seriesLink, showError, short, table, timeEl, updated, wrap, fill } from './common.js';
import { COLORS, chart, vline } from './plot.js';

const KEYF = ['host', 'tree', 'branch', 'build_mode', 'benchmark', 'metric'];
const box = $('#trends');
let keys = [];
let data = null;   // the chosen key's answer
let plot = null;

const field = (id, label, control) => h('div', { class: 'field' }, h('label', { for: id }, label), control);
const hostSel = h('select', { id: 'host', name: 'host' });
const keySel = h('select', { id: 'key', name: 'key' });
const xPos = h('input', { type: 'radio', name: 'x', value: 'position', id: 'x-position' });
const xTime = h('input', { type: 'radio', name: 'x', value: 'time', id: 'x-time' });
const figure = h('figure', { id: 'trend-plot', data: { points: 0 } });
const tables = h('div', { id: 'trend-tables' });

const keyLabel = (k) => `${k.benchmark} · ${k.metric} — ${k.tree} ${k.branch}, ${k.build_mode} (${k.points} point${k.points === 1 ? '' : 's'})`;

function fillKeys(host, want) {
  keySel.replaceChildren();
  keys.forEach((k, i) => { if (k.host === host) keySel.append(h('option', { value: String(i) }, keyLabel(k))); });
  const i = want ? keys.findIndex((k) => k.host === host && KEYF.every((f) => String(k[f]) === want[f])) : -1;
  if (i >= 0) keySel.value = String(i);
}

function syncUrl() {
  const k = keys[+keySel.value];
  if (!k) return;
  const p = new URLSearchParams();
  for (const f of KEYF) p.set(f, k[f]);
  if (xTime.checked) p.set('x', 'time');
  history.replaceState(null, '', '/trends?' + p);
}

async function load() {
  const k = keys[+keySel.value];
  if (!k) return;
  syncUrl();
  const p = new URLSearchParams();
  for (const f of KEYF) p.set(f, k[f]);
  figure.setAttribute('aria-busy', 'true');
  try {
    data = await getJSON('/api/v1/trends?' + p);
    if (keys[+keySel.value] !== k) return;   // another key was chosen meanwhile
    draw();
  } catch (e) {
    showError(e.message);
  } finally {
    figure.removeAttribute('aria-busy');
  }
}

// Where a change point goes on the x axis: between its two commits.
function cpX(cp, pts, time) {
  const at = (c, last) => {
    const m = pts.filter((p) => p.commit === c);
    return m.length ? (last ? m[m.length - 1] : m[0]) : null;
  };
  const b = at(cp.commit_before, true), a = at(cp.commit_after, false);
  const x = (p) => (time ? p.measured_at : p.position);
  if (b && a) return (x(b) + x(a)) / 2;
  return a ? x(a) : b ? x(b) : null;
}

function draw() {
  if (plot) { plot.destroy(); plot = null; }
  const time = xTime.checked;
  const k = data.key || keys[+keySel.value];
  const pts = [...(data.points || [])].filter((p) => typeof p.value === 'number')
    .sort(time ? (a, b) => a.measured_at - b.measured_at : (a, b) => a.position - b.position);
  const cps = data.change_points || [];
  const orderName = data.order === 'measured' ? 'measured order' : 'git order';
  const area = h('div', { class: 'plot-area' });
  figure.dataset.points = String(pts.length);
  fill(figure, h('figcaption', null, `${k.metric}${k.unit ? ' (' + k.unit + ')' : ''} on ${k.host} — ${k.tree} ${k.branch}, ${k.build_mode}`,
    h('span', { class: 'hint' }, ` — x: ${time ? 'measured at (UTC)' : 'position in ' + orderName}; drag to zoom, double-click to reset; dashed lines: change points`)), area);
  if (pts.length) {
    const xs = pts.map((p) => (time ? p.measured_at : p.position));
    const byX = new Map(pts.map((p) => [time ? p.measured_at : p.position, p]));
    const marks = cps.map((cp, i) => [cpX(cp, pts, time), `CP${i + 1} ${fmtPct(cp.effect)}`]).filter(([x]) => x !== null);
    plot = chart(area, {
      data: [xs, pts.map((p) => p.value)],
      time,
      height: 320,
      xLabel: time ? 'measured at (UTC)' : 'position (' + orderName + ')',
      xIncrs: time ? undefined : [1, 2, 5, 10, 20, 50, 100, 200, 500, 1000, 2000, 5000],
      yLabel: k.unit || '',
      xValue: (u, v) => { const p = byX.get(v); return v === null || v === undefined ? '—' : p ? `${time ? fmtDate(v) : v} · ${short(p.commit)}` : String(v); },
      series: [{ label: 'base median', color: COLORS.line, width: 1.5, size: 5 }],
      draw: (u) => { for (const [x, label] of marks) vline(u, x, COLORS.mark, label); },
    });
  } else area.append(h('p', { class: 'none' }, 'No point to plot.'));
  fill(tables, ...cpTable(cps), ...pointsTable(pts, time, orderName));
  updated();
}

function cpTable(cps) {
  return [h('h2', null, 'Change points'), wrap(table({ id: 'change-points' }, 'Change points (suspected changes of level on the main branch; negative effect is worse)',
    ['#', 'Commits', '=Effect', '=p', 'State', 'Detected'], cps, (c, i) => h('tr', { data: { before: c.commit_before, after: c.commit_after } },
      h('th', { scope: 'row' }, 'CP' + (i + 1)), h('td', { class: 'nowrap' }, commitEl(c.commit_before), ' .. ', commitEl(c.commit_after)),
      num(c.effect, fmtPct, 'effect'), num(c.p, fmtP, 'p'), h('td', null, badge(c.state)), h('td', { class: 'nowrap' }, timeEl(c.detected_at))),
    'None found.'), 'Change points')];
}

function pointsTable(pts, time, orderName) {
  return [h('h2', null, 'Points'), wrap(table({ id: 'trend-points' }, `${pts.length} point${pts.length === 1 ? '' : 's'}, ${time ? 'by measurement time' : 'in ' + orderName}`,
    ['=Position', 'Commit', '=Value', '=Samples', 'Measured', 'Series'], pts, (p) => h('tr', { data: { commit: p.commit } },
      num(p.position, String, 'position', 'th', { scope: 'row' }), cell('commit', p.commit, commitEl(p.commit)),
      num(p.value, fmtSI, 'value'), num(p.samples, String, 'samples'),
      h('td', { class: 'nowrap', data: { field: 'measured_at', value: p.measured_at ?? '' } }, timeEl(p.measured_at)),
      cell('series', p.series, seriesLink(p.series), p.job !== null && p.job !== undefined ? h('span', { class: 'addr' }, ' job ' + p.job) : null)),
    'No point.'), 'Points')];
}

async function main() {
  const ans = await getJSON('/api/v1/trends');
  keys = ans.keys || [];
  if (!keys.length) {
    fill(box, h('p', { class: 'none' }, 'No history yet: each decided job adds its base-side medians here.'));
    return;
  }
  const q = new URLSearchParams(location.search);
  const want = {};
  for (const f of KEYF) want[f] = q.get(f) || '';
  const hosts = [...new Set(keys.map((k) => k.host))].sort();
  for (const x of hosts) hostSel.append(h('option', { value: x }, x || '(unknown host)'));
  hostSel.value = hosts.includes(want.host) ? want.host : hosts[0];
  fillKeys(hostSel.value, want);
  (q.get('x') === 'time' ? xTime : xPos).checked = true;
  hostSel.addEventListener('change', () => { fillKeys(hostSel.value, null); load(); });
  keySel.addEventListener('change', load);
  for (const r of [xPos, xTime]) r.addEventListener('change', () => { syncUrl(); if (data) draw(); });
  fill(box, 
    h('form', { class: 'controls', id: 'trend-form', 'aria-label': 'Choose a trend' },
      field('host', 'Host', hostSel), field('key', 'Key', keySel),
      h('fieldset', null, h('legend', null, 'x axis'),
        h('label', null, xPos, ' commit order'), h('label', null, xTime, ' over time'))),
    h('div', { 'aria-live': 'polite' }, figure), tables);
  $('#trend-form').addEventListener('submit', (ev) => ev.preventDefault());
  await load();
}

main().catch((e) => showError(e.message)).finally(ready);
