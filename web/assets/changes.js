// Change points on the main branches: every step found in a key's
// history, its range as bisection narrows it, the commit once located,
// and why one was dismissed.  The state filter is in the URL query.
import { $, badge, cell, commitEl, fill, fmtP, fmtPct, getJSON, h, num, ready, showError, table, timeEl, wrap } from './common.js';

const STATES = ['suspected', 'confirmed', 'dismissed'];
const LIMIT = 1000;   // the API's most
const box = $('#changes-box');
const summary = $('#summary');
const dash = () => h('span', { class: 'none' }, '—');

function wanted() {
  const s = new URLSearchParams(location.search).get('state') || '';
  return STATES.includes(s) ? s : '';
}

function filters(state) {
  const sel = h('select', { id: 'state', name: 'state' },
    h('option', { value: '' }, 'all'), STATES.map((s) => h('option', { value: s }, s)));
  sel.value = state;
  const form = h('form', { id: 'filters', 'aria-label': 'Filter change points' },
    h('div', { class: 'field' }, h('label', { for: 'state' }, 'State'), sel),
    h('div', { class: 'field buttons' }, h('button', { type: 'submit' }, 'Show')));
  const go = (ev) => {
    if (ev) ev.preventDefault();
    location.assign('/changes' + (sel.value ? '?state=' + encodeURIComponent(sel.value) : ''));
  };
  form.addEventListener('submit', go);
  sel.addEventListener('change', () => go());
  return form;
}

// The key's history on the trends page.
function trendHref(c) {
  const p = new URLSearchParams();
  for (const f of ['host', 'tree', 'branch', 'build_mode', 'benchmark', 'metric']) p.set(f, c[f]);
  return '/trends?' + p;
}

// The range as it stands, or the commit once located; the range as first
// found beside it when bisection narrowed it.
function rangeCell(c) {
  const found = (c.first_before && c.first_before !== c.commit_before) || (c.first_after && c.first_after !== c.commit_after);
  return h('td', { class: 'nowrap', data: { field: 'range', before: c.commit_before, after: c.commit_after, located: c.located_commit } },
    c.located_commit ? ['at ', commitEl(c.located_commit)] : [commitEl(c.commit_before), '..', commitEl(c.commit_after)],
    found ? h('div', { class: 'addr' }, 'found as ', commitEl(c.first_before), '..', commitEl(c.first_after)) : null);
}

function row(c) {
  const tone = c.effect_pct < 0 ? 'regression' : c.effect_pct > 0 ? 'improvement' : null;
  return h('tr', { id: 'cp-' + c.id, class: ['cp', c.state === 'confirmed' ? tone : null], data: { cp: c.id, state: c.state } },
    cell('state', c.state, badge(c.state)),
    h('td', { class: 'desc', data: { field: 'branch', tree: c.tree, branch: c.branch } }, c.tree + '/' + c.branch),
    h('td', { class: 'nowrap', data: { field: 'host', value: c.host } }, c.host),
    h('td', { class: 'nowrap', data: { field: 'build_mode', value: c.build_mode } }, c.build_mode),
    h('th', { scope: 'row', class: 'desc', data: { field: 'key', benchmark: c.benchmark, metric: c.metric } },
      h('a', { class: 'trend-link', href: trendHref(c) }, c.benchmark + '/' + c.metric),
      c.context ? h('div', { class: 'addr' }, c.context) : null),
    num(c.effect_pct, fmtPct, 'effect', 'td', { class: ['num', tone ? 'marker ' + tone : null] }),
    num(c.p, fmtP, 'p'),
    rangeCell(c),
    h('td', { class: 'num', data: { field: 'bisect_runs', value: c.bisect_runs ?? '', run: c.bisect_run } },
      String(c.bisect_runs ?? 0), c.bisect_run ? h('div', { class: 'addr' }, 'run ' + c.bisect_run + ' waits') : null),
    h('td', { class: 'desc', data: { field: 'why' } }, c.why ? c.why : dash()),
    h('td', { class: 'nowrap', data: { field: 'times' } },
      h('div', { data: { field: 'detected', value: c.detected_at } }, 'found ', timeEl(c.detected_at)),
      h('div', { class: 'addr', data: { field: 'updated', value: c.updated_at } }, 'updated ', timeEl(c.updated_at))));
}

async function main() {
  const state = wanted();
  const ans = await getJSON('/api/v1/change-points?limit=' + LIMIT + (state ? '&state=' + state : ''));
  const cps = ans.change_points || [];
  const n = (s) => cps.filter((c) => c.state === s).length;
  summary.textContent = `${cps.length} change point${cps.length === 1 ? '' : 's'}` +
    (state ? ` ${state}` : `: ${n('suspected')} suspected, ${n('confirmed')} confirmed, ${n('dismissed')} dismissed`) +
    (cps.length >= LIMIT ? ` (the newest ${LIMIT})` : '');
  fill(box, filters(state), wrap(table({ id: 'changes' }, 'Change points, newest first',
    ['State', 'Tree/branch', 'Host', 'Build mode', 'Benchmark/metric', '=Effect', '=p', 'Range or commit', '=Bisect runs', 'Why', 'Found / updated'],
    cps, row, state ? `No ${state} change point.` : 'No change point found yet: baselines and decided jobs on a main branch add the history they are searched in.'),
  'Change points'));
  // #cp-ID from the banner: scroll there once the row exists.
  const target = location.hash && document.getElementById(decodeURIComponent(location.hash.slice(1)));
  if (target) target.scrollIntoView();
}

main().catch((e) => showError(e.message)).finally(ready);
