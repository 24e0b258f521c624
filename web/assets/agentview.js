// The agents page's pure parts: what an agent's drift, its own noise and
// its SSH connection look like, from the JSON alone (no fetch, no page state), so that the
// browser tests can render an object the API does not give yet.
import { badge, fmtDate, fmtPct, h, num, table, timeEl, commitEl, wrap } from './common.js';

const fmtPlain = (v) => v.toFixed(2) + '%';

// span.drift[data-drift=flagged|drained] for an agent's `drift` (null when
// absent or not an object): a "drift" (or "drained") badge, the why text,
// and the key, change and time it was seen in.
export function driftEl(d) {
  if (!d || typeof d !== 'object' || Array.isArray(d)) return null;
  const drained = d.state === 'drained';
  const key = [d.build_mode, d.benchmark && d.metric ? d.benchmark + '/' + d.metric : d.benchmark || d.metric].filter(Boolean).join(' ');
  const change = typeof d.change_pct === 'number' && Number.isFinite(d.change_pct) ? fmtPct(d.change_pct) : null;
  return h('span', { class: 'drift', data: { drift: drained ? 'drained' : 'flagged', value: d.change_pct ?? '' } },
    badge(drained ? 'drained' : 'drift'), ' ',
    h('span', { class: 'drift-why desc' }, d.why ? String(d.why) : 'host drift'),
    key || change || d.since ? h('div', { class: 'addr' },
      [key, change].filter(Boolean).join(' '), d.since ? [key || change ? ', since ' : 'since ', timeEl(d.since, fmtDate(d.since))] : null) : null);
}

// section.noise[data-agent=NAME]: the agent's A/A noise per build mode and
// key (GET /api/v1/hosts/NAME/noise), or "no baselines yet".
export function noiseSection(name, ans) {
  const keys = (ans && ans.keys) || [];
  const body = keys.length
    ? wrap(table({ class: 'noise' }, null, ['Build mode', 'Benchmark/metric', '=Spread σ', '=MDE', '=Pairs', '=Jobs', 'Latest baseline'], keys, (k) =>
      h('tr', { data: { buildMode: k.build_mode, benchmark: k.benchmark, metric: k.metric } },
        h('td', { data: { field: 'build_mode' } }, k.build_mode),
        h('th', { scope: 'row', class: 'desc', data: { field: 'key' } }, k.benchmark + '/' + k.metric),
        num(k.sigma_pct, fmtPlain, 'sigma_pct'),
        num(k.mde_pct, fmtPlain, 'mde_pct', 'td', { title: typeof k.max_repetitions === 'number' && k.max_repetitions ? `at ${k.max_repetitions} runs per side, alpha ${k.alpha}` : null }),
        num(k.pairs, String, 'pairs'),
        num(k.jobs, String, 'jobs'),
        h('td', { class: 'nowrap', data: { field: 'last', value: k.last_at ?? '' } }, commitEl(k.last_commit), ' ', timeEl(k.last_at)))),
    'Noise of ' + name)
    : h('p', { class: 'none' }, 'no baselines yet');
  return h('section', { class: 'noise', data: { agent: name, keys: keys.length } }, h('h3', null, name), body);
}

const isNum = (v) => typeof v === 'number' && Number.isFinite(v);

// div.ssh[data-ssh-state=STATE] for an agent's `ssh` (null for a daemon
// agent, or when absent or not an object): the connection state as a
// badge, the target, "job N attempt A" while running, the host key's
// fingerprint (.hostkey), the agent version, the connections and
// failures, and the last error (.ssh-error) with its time.  Every string
// comes from the network or the host: text only.
export function sshEl(s) {
  if (!s || typeof s !== 'object' || Array.isArray(s)) return null;
  const state = s.state === null || s.state === undefined ? '' : String(s.state);
  const running = state === 'running' && isNum(s.job);
  const counts = [isNum(s.connects) ? s.connects + (s.connects === 1 ? ' connect' : ' connects') : null,
    isNum(s.failures) && s.failures ? s.failures + (s.failures === 1 ? ' failure' : ' failures') : null];
  return h('div', { class: 'ssh', data: { sshState: state } },
    badge(state || 'unknown'), ' ',
    h('span', { class: 'ssh-target desc', title: 'SSH target' }, s.target ? String(s.target) : '?'),
    running ? h('div', { class: 'ssh-job', data: { job: s.job, attempt: s.attempt ?? '' } },
      'job ' + s.job + (isNum(s.attempt) ? ' attempt ' + s.attempt : '')) : null,
    s.host_key ? h('code', { class: 'hostkey', title: 'host key' }, String(s.host_key)) : null,
    s.agent_version ? h('div', { class: 'addr ssh-version' }, String(s.agent_version)) : null,
    s.connected_at || counts.some(Boolean) ? h('div', { class: 'addr' },
      s.connected_at ? ['connected ', timeEl(s.connected_at, fmtDate(s.connected_at))] : null,
      s.connected_at && counts.some(Boolean) ? ' · ' : null, counts.filter(Boolean).join(', ')) : null,
    s.last_error ? h('div', { class: 'ssh-error' },
      state === 'error' ? null : 'last error: ',
      h('span', { class: 'ssh-error-text' }, String(s.last_error)),
      s.last_error_at ? [' · ', timeEl(s.last_error_at, fmtDate(s.last_error_at))] : null) : null);
}
