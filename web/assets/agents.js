// Agents: who is busy with what, refreshed every 5 s in place.
import { $, badge, dlOf, fmtAgo, fmtDate, fmtEta, getJSON, h, keepFocus, poll, progressEl, table, timeEl, updated, wrap, fill } from './common.js';

const box = $('#agents-box');
const summary = $('#summary');
const stamp = h('p', { class: 'hint', id: 'updated' });
const t = table({ id: 'agents' }, 'Agents', ['Agent', 'State', 'Labels', 'Host', 'Job', 'Stage', 'Progress', 'ETA', 'Last seen', 'Recent outcomes']);
const open = new Set();   // agents whose facts are unfolded, kept across refreshes

function factsCell(a) {
  const f = a.facts || {};
  const bits = [f.model || f.cpu_model || f.cpu, typeof f.cores === 'number' ? f.cores + ' cores' : null, f.kernel ? 'kernel ' + f.kernel : null]
    .filter((x) => x !== null && x !== undefined && x !== '').map(String);
  const keys = Object.keys(f);
  if (!keys.length) return h('td', { data: { field: 'facts' } }, h('span', { class: 'none' }, 'no facts'));
  const d = h('details', { open: open.has(a.name) }, h('summary', null, 'all facts'), dlOf(f, 0, 'facts'));
  d.addEventListener('toggle', () => { if (d.open) open.add(a.name); else open.delete(a.name); });
  return h('td', { data: { field: 'facts' } }, bits.join(' · '), d);
}

function row(a, now) {
  const j = a.job;
  const labels = Object.entries(a.labels || {});
  return h('tr', { data: { agent: a.name, state: a.state } },
    h('th', { scope: 'row', data: { field: 'name' } }, a.name, a.transport ? h('div', { class: 'addr' }, a.transport) : null),
    h('td', { data: { field: 'state', value: a.state } }, badge(a.state)),
    h('td', { data: { field: 'labels' } }, labels.length ? h('span', { class: 'chips' }, labels.map(([k, v]) => h('span', { class: 'chip' }, k + '=' + v))) : h('span', { class: 'none' }, '—')),
    factsCell(a),
    h('td', { data: { field: 'job', value: j ? j.id : '' } }, j
      ? [h('a', { href: '/series/' + encodeURIComponent(j.series) + '#run-' + encodeURIComponent(j.run) }, `job ${j.id}`), ` series ${j.series}`,
        h('div', { class: 'addr' }, [j.context, j.build_mode, j.attempt > 1 ? 'attempt ' + j.attempt : null].filter(Boolean).join(' · '))]
      : h('span', { class: 'none' }, '—')),
    h('td', { data: { field: 'stage', value: j && j.stage ? j.stage : '' } }, j && j.stage ? j.stage : '—'),
    h('td', { data: { field: 'progress', value: j && typeof j.progress === 'number' ? j.progress : '' } }, j ? progressEl(j.progress) : '—'),
    h('td', { class: 'nowrap', data: { field: 'eta', value: j && typeof j.eta_s === 'number' ? j.eta_s : '' } }, j ? fmtEta(j.eta_s) : '—'),
    h('td', { class: 'nowrap', data: { field: 'last_seen', value: a.last_seen ?? '' } },
      a.last_seen ? h('time', { datetime: new Date(a.last_seen * 1000).toISOString(), title: fmtDate(a.last_seen, true) }, fmtAgo(a.last_seen, now)) : 'never'),
    h('td', { data: { field: 'recent' } }, (a.recent || []).length
      ? h('span', { class: 'chips' }, a.recent.slice(0, 10).map((r) => h('span', { class: 'recent', data: { job: r.job }, title: `job ${r.job} attempt ${r.attempt}: ${r.context || ''}, ended ${fmtDate(r.ended_at)}` }, badge(r.outcome))))
      : h('span', { class: 'none' }, 'none')));
}

async function refresh() {
  const ans = await getJSON('/api/v1/agents');
  const now = ans.now || Date.now() / 1000;
  const agents = ans.agents || [];
  await keepFocus(t, () => {
    fill(t.tBodies[0], ...agents.map((a) => row(a, now)));
    if (!agents.length) t.tBodies[0].append(h('tr', null, h('td', { colspan: '10', class: 'none' }, 'No agent registered (perfgate-controller agent add NAME).')));
  });
  if (!box.contains(t)) fill(box, wrap(t, 'Agents'), stamp);
  const n = (s) => agents.filter((a) => a.state === s).length;
  const text = `${agents.length} agent${agents.length === 1 ? '' : 's'}: ${n('busy')} busy, ${n('idle')} idle, ${n('offline')} offline, ${n('disabled')} disabled`;
  if (summary.textContent !== text) summary.textContent = text;
  fill(stamp, 'updated ', timeEl(now, fmtDate(now, true)), ' · refreshes every 5 s');
  updated();
}

poll(refresh, 5000);
