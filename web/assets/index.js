// The series list: filters in the URL query, newest first, a check matrix
// with one column per context, 50 a page.
import { $, badge, getJSON, h, meta, num, ready, showError, table, timeEl, wrap, fill } from './common.js';

const LIMIT = 50;
const FILTERS = ['state', 'submitter', 'context', 'tree', 'q'];

function query() {
  const p = new URLSearchParams(location.search);
  const f = {};
  for (const k of FILTERS) f[k] = (p.get(k) || '').trim();
  f.offset = Math.max(0, parseInt(p.get('offset') || '0', 10) || 0);
  return f;
}

// The page's URL for filters f at offset (empty filters left out).
function pageUrl(f, offset) {
  const p = new URLSearchParams();
  for (const k of FILTERS) if (f[k]) p.set(k, f[k]);
  if (offset > 0) p.set('offset', String(offset));
  const s = p.toString();
  return '/' + (s ? '?' + s : '');
}

function fillSelect(sel, values, current) {
  for (const v of values || []) sel.append(h('option', { value: v }, v));
  // a value from the URL that the controller does not list still shows
  if (current && !(values || []).includes(current)) sel.append(h('option', { value: current }, current));
  sel.value = current;
}

function setupForm(m, f) {
  const form = $('#filters');
  fillSelect(form.elements.state, m.series_states, f.state);
  fillSelect(form.elements.context, m.contexts, f.context);
  fillSelect(form.elements.tree, m.trees, f.tree);
  form.elements.submitter.value = f.submitter;
  form.elements.q.value = f.q;
  form.addEventListener('submit', (ev) => {
    ev.preventDefault();
    const nf = {};
    for (const k of FILTERS) nf[k] = String(form.elements[k].value || '').trim();
    location.assign(pageUrl(nf, 0));
  });
}

function checkCell(s, ctx) {
  const c = (s.checks || []).find((x) => x.context === ctx);
  if (!c) return h('td', { class: ['check', 'empty'], data: { context: ctx } }, h('span', { 'aria-label': 'no check' }, '—'));
  return h('td', { class: 'check', data: { context: ctx, state: c.state } },
    h('a', { href: '/series/' + encodeURIComponent(s.id) + '#ctx-' + encodeURIComponent(ctx), title: c.description || null }, c.state));
}

function row(s, contexts) {
  const submitter = s.submitter_name || s.submitter || '';
  return h('tr', { data: { seriesId: s.id } },
    num(s.id, String, 'id'),
    h('th', { scope: 'row', class: 'title-cell', data: { field: 'title' } },
      h('a', { class: 'series-link', href: '/series/' + encodeURIComponent(s.id) }, s.title || '(no title)')),
    num(s.version, (v) => 'v' + v, 'version'),
    h('td', { class: 'num', data: { field: 'patches', received: s.received, total: s.total } }, `${s.received ?? '?'}/${s.total ?? '?'}`),
    h('td', { data: { field: 'state', value: s.state } }, h('span', { class: 'badges' }, badge(s.state),
      s.stale && s.state !== 'stale' ? badge('stale') : null, s.rfc ? badge('rfc', 'RFC') : null)),
    h('td', { data: { field: 'submitter' } }, submitter,
      s.submitter_name && s.submitter ? h('div', { class: 'addr' }, s.submitter) : null),
    h('td', { class: 'nowrap', data: { field: 'date', value: s.date } }, timeEl(s.date)),
    contexts.map((ctx) => checkCell(s, ctx)));
}

function pager(f, ans) {
  const total = ans.total || 0, off = ans.offset || 0, n = (ans.series || []).length;
  const prev = off > 0
    ? h('a', { rel: 'prev', href: pageUrl(f, Math.max(0, off - LIMIT)) }, '← Newer')
    : h('span', { class: 'disabled', 'aria-disabled': 'true' }, '← Newer');
  const next = off + n < total
    ? h('a', { rel: 'next', href: pageUrl(f, off + LIMIT) }, 'Older →')
    : h('span', { class: 'disabled', 'aria-disabled': 'true' }, 'Older →');
  const range = n ? `${off + 1}–${off + n} of ${total}` : `0 of ${total}`;
  return h('nav', { id: 'pages', 'aria-label': 'Pages' }, prev, h('span', { class: 'range' }, range), next);
}

async function main() {
  const f = query();
  const p = new URLSearchParams({ order: 'newest', limit: String(LIMIT), offset: String(f.offset) });
  for (const k of FILTERS) if (f[k]) p.set(k, f[k]);
  const [m, ans] = await Promise.all([meta(), getJSON('/api/v1/series?' + p)]);
  setupForm(m, f);
  const contexts = m.contexts || [];
  const heads = ['=ID', 'Series', '=Version', '=Patches', 'State', 'Submitter', 'Date',
    ...contexts.map((c) => h('th', { scope: 'col', class: 'ctx', data: { context: c } }, c))];
  const active = FILTERS.filter((k) => f[k]).map((k) => `${k} “${f[k]}”`).join(', ');
  const t = table({ id: 'series' }, ['Series, newest first', active ? h('span', { class: 'hint' }, ' — filtered by ' + active) : null], heads,
    ans.series || [], (s) => row(s, contexts), active ? 'No series match these filters.' : 'No series yet.');
  fill($('#results'), wrap(t, 'Series'), pager(f, ans));
}

main().catch((e) => showError(e.message)).finally(ready);
