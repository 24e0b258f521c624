// The agents page's pure parts: what an agent's drift and its own noise
// look like, from the JSON alone (no fetch, no page state), so that the
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
