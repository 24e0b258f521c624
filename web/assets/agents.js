// Agents: who is busy with what, refreshed every 5 s in place.
import { $, badge, cell, dlOf, fill, fmtAgo, fmtDate, fmtEta, getJSON, h, keepFocus, poll, progressEl, table, timeEl, updated, wrap } from './common.js';
import { driftEl, noiseSection, sshEl } from './agentview.js';

const box = wrap(null, 'Agents');
const summary = $('#summary');
const stamp = h('p', { class: 'hint', id: 'updated' });
const open = new Set();   // agents whose facts are unfolded, kept across refreshes
const dash = () => h('span', { class: 'none' }, '—');
// Each agent's own noise changes only with a baseline: fetched again
// every minute (or when the agents change), not on every refresh.
const NOISE_MS = 60000;
const noiseBox = h('div', { id: 'noise-box' });
const noiseSec = h('section', { id: 'noise', 'aria-labelledby': 'h-noise' },
  h('h2', { id: 'h-noise' }, 'Host noise'),
  h('p', { class: 'hint' }, 'Each agent\'s A/A noise from its latest baselines (one build as both sides): the spread of the pair ratios, and the smallest slowdown (MDE) a verdict on that host can find at its context\'s cap.'),
  noiseBox);
let noiseAt = 0, noiseOf = '';

function factsCell(a) {
  const f = a.facts || {};
  if (!Object.keys(f).length) return cell('facts', undefined, h('span', { class: 'none' }, 'no facts'));
  const d = h('details', { open: open.has(a.name) }, h('summary', null, 'all facts'), dlOf(f, 0, 'facts'));
  d.addEventListener('toggle', () => { if (d.open) open.add(a.name); else open.delete(a.name); });
  const bits = [f.model || f.cpu, typeof f.cores === 'number' ? f.cores + ' cores' : null, f.kernel ? 'kernel ' + f.kernel : null];
  return cell('facts', undefined, bits.filter(Boolean).map(String).join(' · '), d);
}

function row(a, now) {
  const j = a.job;
  const labels = Object.entries(a.labels || {});
  const drift = driftEl(a.drift);
  const ssh = sshEl(a.ssh);
  return h('tr', { data: { agent: a.name, state: a.state, drift: drift ? drift.dataset.drift : undefined } },
    h('th', { scope: 'row', class: ssh ? 'ssh-host' : null, data: { field: 'name' } }, a.name, a.transport ? h('div', { class: 'addr' }, a.transport) : null, ssh),
    cell('state', a.state, badge(a.state), drift ? h('div', null, drift) : null),
    cell('labels', undefined, labels.length ? h('span', { class: 'chips' }, labels.map(([k, v]) => h('span', { class: 'chip' }, k + '=' + v))) : dash()),
    factsCell(a),
    cell('job', j ? j.id : null, j ? [j.series === null ? ['job ' + j.id, ' baseline run ' + j.run]
      : [h('a', { href: '/series/' + encodeURIComponent(j.series) + '#run-' + encodeURIComponent(j.run) }, 'job ' + j.id), ' series ' + j.series],
      h('div', { class: 'addr' }, [j.context, j.build_mode, j.attempt > 1 ? 'attempt ' + j.attempt : null].filter(Boolean).join(' · '))] : dash()),
    cell('stage', j && j.stage, j && j.stage ? j.stage : dash()),
    cell('progress', j && j.progress, j ? progressEl(j.progress) : dash()),
    h('td', { class: 'nowrap', data: { field: 'eta', value: j ? j.eta_s ?? '' : '' } }, j ? fmtEta(j.eta_s) : dash()),
    h('td', { class: 'nowrap', data: { field: 'last_seen', value: a.last_seen ?? '' } }, a.last_seen ? timeEl(a.last_seen, fmtAgo(a.last_seen, now)) : 'never'),
    cell('recent', undefined, (a.recent || []).length ? h('span', { class: 'chips' }, a.recent.slice(0, 10).map((r) =>
      h('span', { class: 'recent', data: { job: r.job }, title: `job ${r.job} attempt ${r.attempt}: ${r.context || ''}, ended ${fmtDate(r.ended_at)}` }, badge(r.outcome)))) : h('span', { class: 'none' }, 'none')));
}

async function refreshNoise(agents) {
  const names = agents.map((a) => a.name);
  if (Date.now() - noiseAt < NOISE_MS && names.join('\n') === noiseOf) return;
  const answers = await Promise.all(names.map((n) => getJSON('/api/v1/hosts/' + encodeURIComponent(n) + '/noise')
    .catch((e) => ({ error: e.message }))));
  fill(noiseBox, names.length ? names.map((n, i) => answers[i].error
    ? h('section', { class: 'noise', data: { agent: n } }, h('h3', null, n), h('p', { class: 'none' }, answers[i].error))
    : noiseSection(n, answers[i])) : h('p', { class: 'none' }, 'No agent.'));
  noiseAt = Date.now();
  noiseOf = names.join('\n');
}

async function refresh() {
  const ans = await getJSON('/api/v1/agents');
  const now = ans.now || Date.now() / 1000;
  const agents = ans.agents || [];
  await keepFocus(box, () => fill(box, table({ id: 'agents' }, 'Agents',
    ['Agent', 'State', 'Labels', 'Host', 'Job', 'Stage', 'Progress', 'ETA', 'Last seen', 'Recent outcomes'],
    agents, (a) => row(a, now), 'No agent registered (perfgate-controller agent add NAME).')));
  if (!box.isConnected) fill($('#agents-box'), box, stamp, noiseSec);
  await refreshNoise(agents);
  const n = (s) => agents.filter((a) => a.state === s).length;
  const text = `${agents.length} agent${agents.length === 1 ? '' : 's'}: ${n('busy')} busy, ${n('idle')} idle, ${n('offline')} offline, ${n('disabled')} disabled`;
  if (summary.textContent !== text) summary.textContent = text;
  fill(stamp, 'updated ', timeEl(now, fmtDate(now, true)), ' · refreshes every 5 s');
  updated();
}

poll(refresh, 5000);
