// Queue: what runs and what waits (and why), refreshed every 5 s.
// With an admin token, jobs can be cancelled from here.
import { $, admin, adminControls, badge, cancelButton, cell, fill, fmtDate, fmtDuration, fmtEta, getJSON, h, keepFocus, meta, num, poll, progressEl, seriesLink, table, timeEl, updated, wrap } from './common.js';

const summary = $('#summary');
const stamp = h('p', { class: 'hint', id: 'updated' });
// The wrappers stay, so a table scrolled sideways stays scrolled.
const runBox = wrap(null, 'Running jobs'), queueBox = wrap(null, 'Queued jobs');
let last = null;

const jobCell = (j) => h('th', { scope: 'row', class: 'nowrap', data: { field: 'job', value: j.id } }, 'job ' + j.id,
  j.attempt > 1 ? h('span', { class: 'addr' }, ' attempt ' + j.attempt) : null);
// A baseline job measures a branch by itself: no series (null).
const series = (j) => cell('series', j.series, j.series === null ? 'baseline' : seriesLink(j.series), j.run ? h('span', { class: 'addr' }, ' run ' + j.run) : null);
const cancel = (j) => (admin() ? h('td', null, cancelButton(j.id, () => refresh().catch(() => {}))) : null);
const heads = (list) => (admin() ? [...list, 'Cancel'] : list);

async function render() {
  if (!last) return;
  const now = last.now || Date.now() / 1000;
  const r = last.running || [], q = last.queued || [];
  await keepFocus($('main'), () => {
    fill(runBox, table({ id: 'queue-running' }, `${r.length} running`,
      heads(['Job', 'Series', 'Context', 'Agent', 'Stage', 'Progress', '=Elapsed', 'ETA']), r, (j) => h('tr', { data: { job: j.id, state: j.state } },
        jobCell(j), series(j),
        cell('context', undefined, j.context || '—', h('div', { class: 'addr' }, [j.host_class, j.build_mode].filter(Boolean).join(' · '))),
        cell('agent', undefined, j.agent || '—'),
        cell('stage', j.stage, j.stage || badge(j.state)),
        cell('progress', j.progress, progressEl(j.progress)),
        num(j.elapsed_s, fmtDuration, 'elapsed'),
        h('td', { class: 'nowrap', data: { field: 'eta', value: j.eta_s ?? '' } }, fmtEta(j.eta_s)),
        cancel(j)), 'Nothing running.'));
    fill(queueBox, table({ id: 'queue-queued' }, `${q.length} queued, in the order they will be leased`,
      heads(['=Position', 'Job', 'Series', 'Context', 'Host class', 'Build mode', '=Priority', 'Waiting because', '=Age']), q, (j) => {
        const age = j.created_at ? Math.max(0, now - j.created_at) : null;
        return h('tr', { data: { job: j.id, state: j.state } },
          num(j.position, String, 'position'), jobCell(j), series(j),
          cell('context', undefined, j.context || '—'), cell('host_class', undefined, j.host_class || '—'), cell('build_mode', undefined, j.build_mode || '—'),
          num(j.priority, String, 'priority'),
          h('td', { class: 'desc', data: { field: 'waiting' } }, j.waiting || '—'),
          num(age, fmtDuration, 'age', 'td', { title: j.created_at ? 'queued ' + fmtDate(j.created_at, true) : null }),
          cancel(j));
      }, 'The queue is empty.'));
  });
  if (!runBox.isConnected) { fill($('#running-box'), runBox); fill($('#queued-box'), queueBox, stamp); }
  const text = `${r.length} running, ${q.length} queued`;
  if (summary.textContent !== text) summary.textContent = text;
  fill(stamp, 'updated ', timeEl(now, fmtDate(now, true)), ' · refreshes every 5 s');
}

async function refresh() {
  last = await getJSON('/api/v1/queue');
  await render();
  updated();
}

meta().then((m) => { adminControls(m, render); render(); }).catch(() => {});
poll(refresh, 5000);
