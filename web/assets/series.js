// The series page, where every Patchwork check links: the series, its
// patches and versions, the checks posted, and per run / context / job
// the before/after table, the samples, the logs, the reproduce commands
// and the host fingerprint.  Admin: recheck, cancel.
import {
  $, CANCELLABLE, HttpError, admin, adminControls, badge, cancelButton, commitEl, dlOf, fill, fmtBytes, fmtDuration, fmtP, fmtPct,
  fmtSI, getJSON, h, meta, num, postJSON, progressEl, ready, safeUrl, seriesLink, showError, table, timeEl, visible, wrap,
} from './common.js';
import { COLORS, chart, inPlot } from './plot.js';

const TAIL = 65536;
const main = $('main');
let M = null;   // meta
let S = null;   // the series

const facts = (rows, compact) => h('dl', { class: ['facts', compact && 'compact'] },
  rows.filter(Boolean).map(([k, v]) => h('div', null, h('dt', null, k), h('dd', null, v))));
const section = (id, title, ...kids) => h('section', { id, 'aria-labelledby': id + '-h' }, h('h2', { id: id + '-h' }, title), ...kids);
const link = (url, text, extra) => (safeUrl(url) ? h('a', { href: url, ...extra }, text) : null);
const rawLink = (url) => link(url, 'raw text', { target: '_blank', rel: 'noopener', class: 'raw' });
const none = (t) => h('p', { class: 'none' }, t);
const d = (v) => v ?? '';

// ---------------------------------------------------------- the series

function header(s) {
  const vs = s.versions || [];
  return [
    h('h1', { id: 'title' }, s.title || '(no title)'),
    s.stale || s.rfc || s.tags ? h('p', { class: 'badges' }, s.stale && s.state !== 'stale' ? badge('stale') : null, s.rfc ? badge('rfc', 'RFC') : null,
      s.tags ? h('span', { class: 'chip' }, s.tags) : null) : null,
    facts([
      ['Series', 'series ' + s.id],
      ['Submitter', h('span', { id: 'submitter' }, s.submitter_name || s.submitter || 'unknown',
        s.submitter_name && s.submitter ? h('span', { class: 'addr' }, ' <' + s.submitter + '>') : null)],
      ['Date', timeEl(s.date)],
      ['Version', 'v' + s.version],
      ['State', badge(s.state)],
      ['Patches', `${s.received ?? '?'} of ${s.total ?? '?'} received`],
      ['Message-ID', h('code', null, s.root_msgid || '—')],
      s.cover_msgid && ['Cover letter', h('code', null, s.cover_msgid)],
      s.supersedes && ['Supersedes', seriesLink(s.supersedes)],
      s.superseded_by && ['Superseded by', seriesLink(s.superseded_by)],
      s.patchwork_series && ['Patchwork series', String(s.patchwork_series)],
      (s.depends_on || []).length && ['Depends on', s.depends_on.map((x) => [seriesLink(x && typeof x === 'object' ? x.id : x), ' '])],
    ]),
    h('nav', { id: 'versions', 'aria-label': 'Versions of this series' }, h('strong', null, 'Versions: '), vs.length < 2 ? h('span', { class: 'none' }, 'only this one')
      : h('ul', null, vs.map((v) => h('li', null, v.id === s.id ? h('span', { 'aria-current': 'page' }, `v${v.version} (this one)`)
        : h('a', { href: '/series/' + encodeURIComponent(v.id), title: v.title || null }, 'v' + v.version), ' ', badge(v.state))))),
  ];
}

function patches(s) {
  const ps = s.patches || [];
  return section('patches-sec', 'Patches', h('ol', { id: 'patches' }, ps.length ? ps.map((p) => {
    const files = (p.files || '').split('\n').filter(Boolean);
    return h('li', { value: p.number, data: { number: p.number } }, h('span', { class: 'subject' }, p.subject || '(no subject)'),
      h('span', { class: 'links' }, link(p.archive_url, 'archive', { class: 'archive' }), link(p.patchwork_url, 'patchwork', { class: 'patchwork' })),
      files.length ? h('details', null, h('summary', null, files.length + (files.length === 1 ? ' file' : ' files')),
        h('ul', null, files.map((f) => h('li', null, h('code', null, f))))) : null);
  }) : h('li', { class: 'none' }, 'no patch received yet')));
}

const REASON = { new: 'new series', recheck: 'recheck', manual: 'manual run' };
function runReason(r) {
  let t = REASON[r.reason] || r.reason || 'run';
  if (r.recheck !== null && r.recheck !== undefined) {
    const rc = (S.rechecks || []).find((x) => x.id === r.recheck);
    t += ' #' + r.recheck + (rc && rc.requester ? ' by ' + rc.requester : '');
  }
  return t;
}

const bases = (s) => section('base', 'Base', (s.runs || []).length ? wrap(table({ class: 'bases' }, 'The base each run measured against',
  ['Run', 'Reason', 'Tree', 'Branch', 'Commit', 'State'], s.runs, (r) => h('tr', { data: { run: r.id } },
    h('th', { scope: 'row' }, h('a', { href: '#run-' + r.id }, 'run ' + r.id)), h('td', null, runReason(r)),
    h('td', { data: { field: 'tree' } }, r.tree || '—'), h('td', { data: { field: 'branch' } }, r.branch || '—'),
    h('td', { data: { field: 'commit', value: d(r.base_commit) } }, commitEl(r.base_commit)), h('td', null, badge(r.state)))), 'Base per run') : none('No run yet.'));

const checks = (s) => section('checks-sec', 'Checks posted', (s.checks || []).length ? wrap(table({ id: 'checks' }, 'Checks posted to Patchwork',
  ['Context', 'State', '=Patch', 'Description', 'Delivery', 'Created', 'Sent'], s.checks, (c) => h('tr', { data: { context: c.context, state: c.state } },
    h('th', { scope: 'row' }, c.context), h('td', null, badge(c.state)), num(c.patch, String, 'patch'),
    h('td', { class: 'desc' }, c.description || '', ' ', link(c.target_url, 'details')),
    h('td', null, badge(c.delivery)), h('td', { class: 'nowrap' }, timeEl(c.created_at)), h('td', { class: 'nowrap' }, timeEl(c.sent_at)))), 'Checks') : none('No check yet.'));

const rechecks = (s) => section('rechecks', 'Rechecks', (s.rechecks || []).length ? wrap(table({ class: 'rechecks' }, 'Recheck requests',
  ['ID', 'Origin', 'Requester', 'Contexts', 'Rebase', 'State'], s.rechecks, (r) => h('tr', { data: { recheck: r.id } },
    h('th', { scope: 'row' }, '#' + r.id), h('td', null, r.origin || '—', r.msgid ? h('div', { class: 'addr' }, r.msgid) : null),
    h('td', null, r.requester || '—'), h('td', null, [].concat(r.contexts || []).join(', ') || 'every context'),
    h('td', null, r.rebase || '—'), h('td', null, badge(r.state)))), 'Rechecks') : none('No recheck requested.'));

// --------------------------------------------------------------- admin

const adminBox = h('section', { id: 'admin-actions', 'aria-labelledby': 'admin-h', hidden: true });

function recheckForm() {
  const result = h('div', { id: 'recheck-result', role: 'status', 'aria-live': 'polite' });
  const form = h('form', { id: 'recheck' },
    h('fieldset', null, h('legend', null, 'Contexts (none ticked: every context)'),
      (M.contexts || []).map((c) => h('label', null, h('input', { type: 'checkbox', name: 'context', value: c }), ' ', c))),
    h('div', { class: 'field' }, h('label', { for: 'recheck-rebase' }, 'Rebase onto branch (empty: the same base)'),
      h('input', { id: 'recheck-rebase', name: 'rebase', type: 'text', placeholder: 'e.g. main', autocomplete: 'off' })),
    h('p', null, h('button', { type: 'submit' }, 'Request a recheck')));
  form.addEventListener('submit', async (ev) => {
    ev.preventDefault();
    const contexts = [...form.querySelectorAll('input[name=context]:checked')].map((i) => i.value);
    const body = { rebase: form.elements.rebase.value.trim() || null };
    if (contexts.length) body.contexts = contexts;
    const btn = form.querySelector('button[type=submit]');
    btn.disabled = true;
    result.dataset.state = 'pending';
    fill(result, 'sending…');
    try {
      const a = await postJSON('/api/v1/series/' + encodeURIComponent(S.id) + '/recheck', body);
      result.dataset.state = 'accepted';
      fill(result, h('p', null, badge('success', 'accepted'), ` recheck ${a && a.recheck !== undefined ? '#' + a.recheck : ''} queued; the planner turns it into a run.`),
        h('pre', { block: JSON.stringify(a, null, 2) }));
    } catch (e) {
      result.dataset.state = 'error';
      fill(result, h('p', null, badge('fail', 'refused'), ' ', e.message));
    } finally { btn.disabled = false; }
  });
  return [form, result];
}

function renderAdmin() {
  const on = admin();
  for (const slot of document.querySelectorAll('.cancel-slot')) fill(slot, on && CANCELLABLE.has(slot.dataset.state) ? cancelButton(slot.dataset.job) : null);
  adminBox.hidden = !on;
  fill(adminBox, on ? [h('h2', { id: 'admin-h' }, 'Admin'), recheckForm()] : null);
}

// ---------------------------------------------------------------- runs

function runSection(r, seen) {
  const jobs = r.jobs || [], vs = r.verdicts || [];
  const ctxs = [...new Set([...(M.contexts || []), ...vs.map((v) => v.context), ...jobs.map((j) => j.context)])]
    .filter((c) => vs.some((v) => v.context === c) || jobs.some((j) => j.context === c));
  return h('section', { class: 'run', id: 'run-' + r.id, data: { run: r.id, reason: r.reason }, 'aria-labelledby': 'run-' + r.id + '-h' },
    h('h2', { id: 'run-' + r.id + '-h' }, 'Run ' + r.id + ': ' + runReason(r) + ' ', badge(r.state)),
    facts([['Base', [r.tree || '?', ' ', r.branch || '?', ' at ', commitEl(r.base_commit)]], ['Created', timeEl(r.created_at)], ['Finished', timeEl(r.finished_at)]], true),
    ctxs.length ? ctxs.map((c) => {
      const v = vs.find((x) => x.context === c);
      const state = v ? v.state : 'pending';
      // The newest run holding a context gets id ctx-CTX (what checks link to).
      const id = seen.has(c) ? `run-${r.id}-ctx-${c}` : 'ctx-' + c;
      seen.add(c);
      return h('section', { class: 'context', id, data: { context: c, state, run: r.id } }, h('h3', null, c, ' ', badge(state)),
        h('p', { class: 'desc' }, v ? v.description || '' : 'no verdict yet'), jobs.filter((j) => j.context === c).map(jobSection));
    }) : none('No job planned.'));
}

const pending = [];   // [job, box, host span] whose verdicts are to load
// A job's stage and progress are the agent's last report: news while it
// runs, stale once it ended ("done bench 58 %" said nothing true).
const LIVE = new Set(['leased', 'running']);

function jobSection(j) {
  const host = h('span', { data: { field: 'host' } }, j.agent || '—');
  const box = h('div', { class: 'verdict-box' }, none('loading the before/after table…'));
  pending.push([j, box, host]);
  return h('section', { class: 'job', data: { job: j.id, state: j.state }, 'aria-labelledby': 'job-' + j.id + '-h' },
    h('h4', { id: 'job-' + j.id + '-h' }, `Job ${j.id}: ${j.build_mode || '?'} on ${j.agent || j.host_class || '?'} `, badge(j.state), j.outcome ? [' ', badge(j.outcome)] : null),
    facts([
      ['Host', host], ['Host class', j.host_class || '—'], ['Build mode', j.build_mode || '—'], ['Agent', j.agent || '—'],
      ['State', h('span', { data: { field: 'state', value: j.state } }, badge(j.state), j.stage && LIVE.has(j.state) ? [' ', j.stage, ' ', progressEl(j.progress)] : null)],
      ['Outcome', h('span', { data: { field: 'outcome', value: d(j.outcome) } }, j.outcome ? badge(j.outcome) : '—')],
      ['Attempts', String(j.attempt ?? '—')], ['Started', timeEl(j.started_at)], ['Finished', timeEl(j.finished_at)],
    ], true),
    j.detail ? h('p', { class: 'desc' }, j.detail) : null,
    h('p', { class: 'cancel-slot', data: { job: j.id, state: j.state } }), box);
}

// ------------------------------------------------- the before/after table

const MARK = { regression: '▼ regression', improvement: '▲ improvement', 'no-change': 'no change', inconclusive: '? inconclusive', noisy: '~ noisy', missing: '– missing' };

// "12.3%"; "none" when no change can be found (the API's null for an
// infinite MDE comes with ci_valid false)
function fmtMde(v) {
  return v.toFixed(1) + '%';
}

function keyRow(k) {
  const cls = k.class || '';
  const mark = MARK[cls] || cls || '—';
  const ci = typeof k.ci_lo_pct === 'number' && typeof k.ci_hi_pct === 'number';
  const conf = typeof k.ci_conf === 'number' ? +(k.ci_conf * 100).toFixed(1) + '%' : '';
  // ci_*_pct are in the effect's sign (negative is worse); the column
  // stands beside the change, so a lower-is-better key's is turned round
  const lo = k.higher_is_better === false ? -k.ci_hi_pct : k.ci_lo_pct;
  const hi = k.higher_is_better === false ? -k.ci_lo_pct : k.ci_hi_pct;
  const mde = typeof k.mde_pct === 'number' ? fmtMde(k.mde_pct) : k.ci_valid === false ? 'none' : '—';
  const why = [k.reason, typeof k.noise_pct === 'number' ? 'noise ' + k.noise_pct.toFixed(1) + '%' : null].filter(Boolean).join('; ');
  return h('tr', { class: ['key', (cls === 'regression' || cls === 'improvement') && cls, !k.gated && 'ungated'],
    data: { benchmark: k.benchmark, metric: k.metric, class: cls, gated: k.gated ? '1' : '0' } },
  h('td', { data: { field: 'benchmark' } }, k.benchmark),
  h('th', { scope: 'row', data: { field: 'metric' } }, h('code', null, k.metric), k.higher_is_better === false ? h('span', { title: 'lower is better' }, '*') : null,
    k.unit ? h('span', { class: 'addr' }, ' ' + k.unit) : null),
  num(k.base_median, fmtSI, 'base_median'),
  num(k.patched_median, fmtSI, 'patched_median'),
  num(k.change_pct, fmtPct, 'change_pct', 'td', { title: typeof k.effect_pct === 'number' && k.effect_pct !== k.change_pct ? 'effect ' + fmtPct(k.effect_pct) + ' (negative is worse)' : null }),
  h('td', { class: ['num', k.ci_valid === false && 'weak'], data: { field: 'ci', lo: d(k.ci_lo_pct), hi: d(k.ci_hi_pct), conf: d(k.ci_conf), valid: k.ci_valid === false ? '0' : '1' },
    title: conf ? conf + ' confidence interval of the change' + (k.ci_valid === false ? ': below the level asked, too few runs to decide' : '') : null },
    ci ? `[${fmtPct(lo)}, ${fmtPct(hi)}]` : '—', conf ? h('span', { class: 'addr' }, ' ' + conf) : null),
  num(k.p, (v) => (k.p_exact === false ? '≈' : '') + fmtP(v), 'p', 'td', { title: k.p_exact === false ? 'normal approximation' : null }),
  h('td', { class: 'num', data: { field: 'n', value: d(k.n_pairs), nBase: d(k.n_base), nPatched: d(k.n_patched) } },
    k.paired ? `${k.n_pairs} pairs` : `${k.n_base ?? '?'}/${k.n_patched ?? '?'}`),
  h('td', { class: 'num', data: { field: 'mde', value: d(k.mde_pct) },
    title: 'minimum detectable effect: the smallest slowdown these runs find 80% of the time' + (typeof k.pairs_needed === 'number' && k.pairs_needed > 0 ? `; about ${k.pairs_needed} runs per side would decide this key` : '') }, mde),
  h('td', { data: { field: 'verdict', value: k.state ?? cls } }, h('span', { class: ['marker', cls] }, k.gated ? mark : '(' + mark + ')'), ' ',
    why ? h('span', { class: 'reason' }, why) : null));
}

function keysTable(v) {
  const keys = v.keys || [];
  if (!keys.length) return none('No samples yet.');
  const p = v.params || {};
  return [wrap(table({ class: 'keys' }, [`Before/after, ${v.repetitions ?? '?'} runs per side`,
    h('span', { class: 'hint' }, ` — threshold ${p.threshold_pct ?? '?'}%, alpha ${p.alpha ?? '?'}, noise limit ${p.noise_limit_pct ?? '?'}%`)],
  ['Benchmark', 'Key', '=Base', '=Patched', '=Change', '=Interval', '=p', '=n', '=MDE', 'Verdict'], keys, keyRow), 'Before/after'),
  h('div', { class: 'notes' }, keys.some((k) => k.higher_is_better === false) ? h('p', null, '* lower is better') : null,
    keys.some((k) => !k.gated) ? h('p', null, '(verdict): reported only, the key does not gate') : null,
    h('p', null, 'Base, patched: medians. Change, p: median of the patched/base ratios of runs done back to back, Wilcoxon signed-rank test (unpaired: medians, Mann-Whitney U). Interval: Hodges-Lehmann, at 1 - alpha; a pass needs it to exclude -threshold, a regression needs it below 0 (greyed: too few runs for the level). MDE: the smallest slowdown these runs find 80% of the time.'))];
}

// x = run order: the k-th base and k-th patched runs share x, and a grey
// segment (a draw hook) joins the two runs of each pair.
function pairPlot(k, later) {
  const side = (s) => ((k.samples && k.samples[s]) || []).map((x) => (typeof x[2] === 'number' ? x[2] : null));
  const b = side('base'), q = side('patched');
  const n = Math.max(b.length, q.length);
  const xs = Array.from({ length: n }, (_, i) => i + 1);
  const data = [xs, xs.map((_, i) => b[i] ?? null), xs.map((_, i) => q[i] ?? null)];
  const area = h('div', { class: 'plot-area' }, n ? null : none('no samples'));
  if (n) later.push(() => chart(area, {
    data, height: 220, xLabel: 'run order (pair)', yLabel: k.unit || '', xIncrs: [1, 2, 5, 10, 20, 50, 100], xRange: [0.5, n + 0.5],
    series: [{ label: 'base', color: COLORS.base }, { label: 'patched', color: COLORS.patched, dash: [5, 3] }],
    draw: (u) => inPlot(u, (c, px) => {
      c.strokeStyle = 'rgba(60,60,60,0.35)';
      c.lineWidth = 2 * px;
      xs.forEach((x, i) => {
        if (data[1][i] === null || data[2][i] === null) return;
        c.beginPath();
        c.moveTo(u.valToPos(x, 'x', true), u.valToPos(data[1][i], 'y', true));
        c.lineTo(u.valToPos(x, 'x', true), u.valToPos(data[2][i], 'y', true));
        c.stroke();
      });
    }),
  }));
  return h('figure', { class: 'plot', data: { benchmark: k.benchmark, metric: k.metric, points: data[1].concat(data[2]).filter((x) => x !== null).length } },
    h('figcaption', null, k.metric, k.unit ? ' (' + k.unit + ')' : '', h('span', { class: 'hint' }, ' — each run in order; a grey line joins a pair')), area);
}

// ---------------------------------------------------------------- logs

const logTitle = h('h5', { id: 'log-title' }, 'Log');
const logNote = h('p', { class: 'log-note', 'aria-live': 'polite' });
const logPre = h('pre', { id: 'log', tabindex: '0', 'aria-labelledby': 'log-title' });
const logPanel = h('section', { id: 'log-panel', 'aria-labelledby': 'log-title', hidden: true }, logTitle, logNote, logPre);

// The log's last 64 KiB first; "show all" fetches the whole of it.
async function showLog(url, label, full) {
  logTitle.textContent = visible('Log: ' + label);
  fill(logNote, full ? 'loading the whole log…' : 'loading…');
  logPre.dataset.state = 'loading';
  logPre.dataset.url = url;
  try {
    const r = await fetch(full ? url : url + (url.includes('?') ? '&' : '?') + 'tail=' + TAIL, { headers: { Accept: 'text/plain' } });
    const text = await r.text();
    if (!r.ok) throw new HttpError(r.status, 'HTTP ' + r.status + ': ' + text.slice(0, 300));
    if (logPre.dataset.url !== url) return;   // another log was asked for since
    const size = parseInt(r.headers.get('X-Perfgate-Log-Size') || '', 10);
    logPre.textContent = text ? visible(text, true) : '(empty log)';
    if (!full && size > TAIL) {
      const all = h('a', { href: url, class: 'show-all' }, 'show all');
      all.addEventListener('click', (ev) => { ev.preventDefault(); showLog(url, label, true); });
      fill(logNote, `showing the last 64 KiB of ${size} bytes — `, all, ' · ', rawLink(url));
    } else fill(logNote, `${Number.isFinite(size) ? size : text.length} bytes · `, rawLink(url));
    logPre.dataset.state = 'loaded';
  } catch (e) {
    logPre.dataset.state = 'error';
    logPre.textContent = '';
    fill(logNote, e.message);
  }
}

function stagesList(v) {
  const st = v.stages || [];
  if (!st.length) return none('No log yet.');
  const ul = h('ul', { class: 'stages' });
  fill(ul, st.map((s) => {
    const a = h('a', { class: 'log-link', href: s.url }, s.stage);
    a.addEventListener('click', (ev) => {
      ev.preventDefault();
      ul.after(logPanel);
      logPanel.hidden = false;
      showLog(s.url, `job ${v.job ? v.job.id : '?'}, attempt ${s.attempt}, ${s.stage}`, false).then(() => logPre.focus({ preventScroll: true }));
      logPanel.scrollIntoView({ block: 'nearest' });
    });
    return h('li', { data: { stage: s.stage, attempt: s.attempt } }, a,
      h('span', { class: 'meta' }, ` attempt ${s.attempt} · ${fmtBytes(s.bytes)} · ${typeof s.duration_ms === 'number' ? fmtDuration(s.duration_ms / 1000) : 'duration unknown'} · `),
      rawLink(s.url));
  }));
  return ul;
}

function reproduce(text) {
  const pre = h('pre', { class: 'reproduce', tabindex: '0', block: text });
  const status = h('span', { role: 'status', class: 'hint' });
  const btn = h('button', { type: 'button', class: 'small copy' }, 'Copy commands');
  btn.addEventListener('click', async () => {
    try {
      await navigator.clipboard.writeText(text);
      status.textContent = 'copied';
    } catch (e) {   // no clipboard (plain http): select the text instead
      const r = document.createRange();
      r.selectNodeContents(pre);
      getSelection().removeAllRanges();
      getSelection().addRange(r);
      status.textContent = 'selected: press Ctrl+C to copy';
    }
  });
  return [h('div', { class: 'copy-row' }, h('h5', null, 'Reproduce'), btn, status), pre];
}

// ----------------------------------------------------------------- job

function rounds(v) {
  let f = 0;
  return (v.rounds || []).length ? [h('h5', null, 'Rounds'), h('ol', { class: 'rounds' }, v.rounds.map((r) => h('li', { data: { attempt: r.attempt, followup: r.followup ? '1' : '0' } },
    h('strong', null, r.followup ? `follow-up round ${++f}` : 'first round'),
    `: attempt ${r.attempt} on ${r.agent || '?'}, repetitions from ${r.first_repetition ?? '?'}, `, badge(r.outcome), ' ', timeEl(r.received_at))))] : null;
}

function renderVerdict(box, v, hostEl) {
  hostEl.textContent = visible(v.host || '—');
  const followups = (v.rounds || []).filter((r) => r.followup).length;
  const stored = v.verdict && v.verdict.description !== v.summary ? v.verdict.description : null;
  const later = [];
  const figs = (v.keys || []).filter((k) => k.gated).map((k) => pairPlot(k, later));
  fill(box,
    h('p', { class: 'job-verdict', data: { state: v.state } }, h('strong', null, 'Verdict: '), badge(v.state),
      v.final ? null : h('span', { class: 'hint' }, ' (provisional: not decided yet)'),
      followups ? h('span', { class: 'hint' }, ` (with ${followups} follow-up round${followups > 1 ? 's' : ''})`) : null,
      ' ', h('span', { class: 'desc' }, v.summary || ''), stored ? h('span', { class: 'desc' }, ' — ' + stored) : null),
    rounds(v), keysTable(v),
    figs.length ? [h('h5', null, 'Samples of the gated keys'), h('div', { class: 'plots' }, figs)] : null,
    h('h5', null, 'Stages and logs'), stagesList(v),
    v.reproduce ? reproduce(v.reproduce) : null,
    h('h5', null, 'Fingerprint', v.fingerprint && v.fingerprint_attempt ? h('span', { class: 'hint' }, ` (attempt ${v.fingerprint_attempt})`) : null),
    v.fingerprint ? dlOf(v.fingerprint, 0, 'fingerprint') : none('No fingerprint yet.'));
  for (const draw of later) draw();   // once in the page, so the charts know their width
}

async function loadVerdict([j, box, host]) {
  try {
    renderVerdict(box, await getJSON('/api/v1/jobs/' + encodeURIComponent(j.id) + '/verdict'), host);
  } catch (e) {
    fill(box, none('No before/after table: ' + e.message));
  }
}

// ---------------------------------------------------------------- main

async function start() {
  const m = location.pathname.match(/^\/series\/([^/]+)\/?$/);
  const id = m ? decodeURIComponent(m[1]) : '';
  if (!/^\d+$/.test(id)) throw new HttpError(404, 'No series ' + id);
  [M, S] = await Promise.all([meta(), getJSON('/api/v1/series/' + id).catch((e) => {
    throw e.status === 404 ? new HttpError(404, 'No series ' + id) : e;
  })]);
  document.title = `${visible(S.title || 'series ' + S.id)} · series ${S.id} · perfgate`;
  const seen = new Set();
  fill(main, header(S), patches(S), bases(S), checks(S), rechecks(S), adminBox,
    [...(S.runs || [])].sort((a, b) => b.id - a.id).map((r) => runSection(r, seen)), logPanel);
  adminControls(M, renderAdmin);
  renderAdmin();
  await Promise.all(pending.map(loadVerdict));
  const t = location.hash.length > 1 && document.getElementById(decodeURIComponent(location.hash.slice(1)));
  if (t) t.scrollIntoView();
}

start().catch((e) => {
  fill(main, h('h1', { id: 'title' }, e.status === 404 ? 'Series not found' : 'Series'));
  showError(e.message);
}).finally(ready);
