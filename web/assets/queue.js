// Queue: what runs and what waits (and why), refreshed every 5 s.
// With an admin token, jobs can be cancelled from here.
import { $, adminControls, badge, cancelButton, fmtDate, fmtDuration, fmtEta, getJSON, h, keepFocus, meta, num, poll, progressEl, seriesLink, table, timeEl, token, updated, wrap, fill } from './common.js';

const summary = $('#summary');
const stamp = h('p', { class: 'hint', id: 'updated' });
let last = null;

const jobCell = (j) => h('th', { scope: 'row', class: 'nowrap', data: { field: 'job', value: j.id } }, 'job ' + j.id,
  j.attempt > 1 ? h('span', { class: 'addr' }, ' attempt ' + j.attempt) : null);
const series = (j) => h('td', { data: { field: 'series', value: j.series ?? '' } }, seriesLink(j.series), j.run ? h('span', { class: 'addr' }, ' run ' + j.run) : null);
const cancel = (j) => (token() ? h('td', null, cancelButton(j, () => refresh().catch(() => {}))) : null);
const heads = (list) => (token() ? [...list, 'Cancel'] : list);
const numHead = (x) => h('th', { scope: 'col', class: 'num' }, x);

function running(list) {
  const t = table({ id: 'queue-running' }, `${list.length} running`,
    heads(['Job', 'Series', 'Context', 'Agent', 'Stage', 'Progress', numHead('Elapsed'), 'ETA']));
  for (const j of list) {
    t.tBodies[0].append(h('tr', { data: { job: j.id, state: j.state } }, jobCell(j), series(j),
      h('td', { data: { field: 'context' } }, j.context || '—', h('div', { class: 'addr' }, [j.host_class, j.build_mode].filter(Boolean).join(' · '))),
      h('td', { data: { field: 'agent' } }, j.agent || '—'),
      h('td', { data: { field: 'stage', value: j.stage ?? '' } }, j.stage || badge(j.state)),
      h('td', { data: { field: 'progress', value: j.progress ?? '' } }, progressEl(j.progress)),
      num(j.elapsed_s, fmtDuration, 'elapsed'),
      h('td', { class: 'nowrap', data: { field: 'eta', value: j.eta_s ?? '' } }, fmtEta(j.eta_s)),
      cancel(j)));
  }
  if (!list.length) t.tBodies[0].append(h('tr', null, h('td', { colspan: '9', class: 'none' }, 'Nothing running.')));
  return wrap(t, 'Running jobs');
}

function queued(list, now) {
  const t = table({ id: 'queue-queued' }, `${list.length} queued, in the order they will be leased`,
    heads([numHead('Position'), 'Job', 'Series', 'Context', 'Host class', 'Build mode', numHead('Priority'), 'Waiting because', numHead('Age')]));
  for (const j of list) {
    const age = j.created_at ? Math.max(0, now - j.created_at) : null;
    t.tBodies[0].append(h('tr', { data: { job: j.id, state: j.state } },
      num(j.position, String, 'position'), jobCell(j), series(j),
      h('td', { data: { field: 'context' } }, j.context || '—'),
      h('td', { data: { field: 'host_class' } }, j.host_class || '—'),
      h('td', { data: { field: 'build_mode' } }, j.build_mode || '—'),
      num(j.priority, String, 'priority'),
      h('td', { class: 'desc', data: { field: 'waiting' } }, j.waiting || '—'),
      h('td', { class: 'num', data: { field: 'age', value: age ?? '' }, title: j.created_at ? 'queued ' + fmtDate(j.created_at, true) : null }, age === null ? '—' : fmtDuration(age)),
      cancel(j)));
  }
  if (!list.length) t.tBodies[0].append(h('tr', null, h('td', { colspan: '10', class: 'none' }, 'The queue is empty.')));
  return wrap(t, 'Queued jobs');
}

async function render() {
  if (!last) return;
  const now = last.now || Date.now() / 1000;
  const r = last.running || [], q = last.queued || [];
  const main = $('main');
  await keepFocus(main, () => {
    fill($('#running-box'), running(r));
    fill($('#queued-box'), queued(q, now), stamp);
  });
  const text = `${r.length} running, ${q.length} queued`;
  if (summary.textContent !== text) summary.textContent = text;
  fill(stamp, 'updated ', timeEl(now, fmtDate(now, true)), ' · refreshes every 5 s');
}

async function refresh() {
  last = await getJSON('/api/v1/queue');
  await render();
  updated();
}

meta().then((m) => adminControls(m, render)).catch(() => {});
poll(refresh, 5000);
