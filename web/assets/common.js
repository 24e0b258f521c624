// perfgate dashboard: helpers shared by every page.
//
// SAFETY RULE: every string that comes from the data (titles, names,
// descriptions, logs, facts...) is rendered as text, through h() / fill()
// below (textContent / createTextNode), never through innerHTML,
// outerHTML, insertAdjacentHTML or document.write.  h() refuses on* and
// *HTML props and drops links that are not http(s) or same origin.  The
// CSP (script-src 'self'; style-src 'self') forbids inline script and
// style=""; setting el.style from JS is fine.

// Code points that would hide or reorder what is shown (C0/C1 controls,
// bidi embeddings, overrides and isolates, LRM/RLM, ALM, U+2028/9), as
// lib/sanitize.c lists them, shown as \xHH / \uHHHH.  In a block (pre)
// newline and tab stay, and CR before LF.
const UNSAFE = /[\u0000-\u001f\u007f-\u009f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]/g;
export function visible(s, block = false) {
  s = String(s);
  return s.replace(UNSAFE, (c, i) => {
    if (block && (c === '\n' || c === '\t' || (c === '\r' && s[i + 1] === '\n'))) return c;
    const n = c.charCodeAt(0);
    return n < 0x80 ? '\\x' + n.toString(16).padStart(2, '0') : '\\u' + n.toString(16).padStart(4, '0');
  });
}

// A URL we put in href: http(s) or same origin, else null.
export function safeUrl(u) {
  if (u === null || u === undefined || u === '') return null;
  try {
    const url = new URL(String(u), location.origin);
    if (url.protocol === 'http:' || url.protocol === 'https:') return url.href;
  } catch (e) { /* not a URL */ }
  return null;
}

const BOOL = new Set(['hidden', 'checked', 'disabled', 'open', 'required']);

// h('a', {class, href, data: {field: 'x'}, on: {click: fn}, text, block}, kids...)
// text: line text; block: pre text (keeps newlines); data: dataset (null
// -> ""); value and the booleans above as properties; others attributes.
export function h(tag, props, ...kids) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(props || {})) {
    if (v === undefined || v === null || v === false) continue;
    if (/^on./i.test(k) || /html|srcdoc/i.test(k)) throw new Error('h: refusing ' + k);
    if (k === 'class') e.className = Array.isArray(v) ? v.filter(Boolean).join(' ') : v;
    else if (k === 'text' || k === 'block') e.textContent = visible(v, k === 'block');
    else if (k === 'data') {
      for (const [dk, dv] of Object.entries(v)) if (dv !== undefined) e.dataset[dk] = dv === null ? '' : String(dv);
    } else if (k === 'on') for (const [ev, fn] of Object.entries(v)) e.addEventListener(ev, fn);
    else if (k === 'value') e.value = String(v);
    else if (BOOL.has(k)) e[k] = true;
    else if (k === 'href' || k === 'src') { if (safeUrl(v)) e.setAttribute(k, String(v)); } else e.setAttribute(k, v === true ? '' : String(v));
  }
  return add(e, kids);
}

function add(e, kids) {
  for (const k of kids) {
    if (k === null || k === undefined || k === false) continue;
    if (Array.isArray(k)) add(e, k);
    else e.appendChild(k instanceof Node ? k : document.createTextNode(visible(k)));
  }
  return e;
}

// Replace el's children (nulls skipped, arrays flattened, text as text).
export function fill(el, ...kids) {
  el.replaceChildren();
  return add(el, kids);
}

export const $ = (sel, root = document) => root.querySelector(sel);
const none = (t = '—') => h('span', { class: 'none' }, t);

// A table that scrolls sideways on a narrow screen; keyboard-scrollable.
export const wrap = (t, label) => h('div', { class: 'table-wrap', tabindex: '0', role: 'region', 'aria-label': label }, t);

// <table> with caption, th[scope=col] heads ('=Name': a numeric column)
// and a row(item) per item, or one row saying `empty`.
export function table(attrs, caption, heads, items = [], row = null, empty = 'none') {
  const th = (x) => (x instanceof Node ? x : x[0] === '=' ? h('th', { scope: 'col', class: 'num' }, x.slice(1)) : h('th', { scope: 'col' }, x));
  return h('table', attrs, caption ? h('caption', null, caption) : null,
    h('thead', null, h('tr', null, heads.map(th))),
    h('tbody', null, items.length ? items.map(row) : h('tr', null, h('td', { colspan: String(heads.length), class: 'none' }, empty))));
}

// A cell: data-field, data-value (exactly String(v) of the JSON value,
// "" for null) unless value is undefined.
export const cell = (field, value, ...kids) => h('td', { data: { field, value: value === undefined ? undefined : value ?? '' } }, ...kids);

// A number cell, formatted, the raw number in data-value and title.
export function num(v, fmt = fmtSI, field, tag = 'td', extra = {}) {
  const ok = typeof v === 'number' && Number.isFinite(v);
  return h(tag, { class: 'num', title: ok ? String(v) : null, ...extra, data: { ...extra.data, field, value: v ?? '' } }, ok ? fmt(v) : '—');
}

// ---------------------------------------------------------- formatting

const isNum = (v) => typeof v === 'number' && Number.isFinite(v);
const sig = (v, n = 3) => String(+v.toPrecision(n));

// 1.23 G, 456 M, 12.3 k, 41.5, 0.0123: three significant digits.
export function fmtSI(v) {
  if (!isNum(v)) return '—';
  for (const [f, s] of [[1e12, 'T'], [1e9, 'G'], [1e6, 'M'], [1e3, 'k']]) if (Math.abs(v) >= f * 0.9995) return sig(v / f) + '\u202f' + s;
  return v === 0 ? '0' : sig(v);
}

// +12.1%, -0.3%, 0.0%
export function fmtPct(v) {
  if (!isNum(v)) return '—';
  const r = v.toFixed(1);
  return +r === 0 ? '0.0%' : (v > 0 ? '+' : '') + r + '%';
}

// p with two significant digits.
export const fmtP = (p) => (!isNum(p) ? '—' : p >= 1 ? '1' : sig(p, 2));

export function fmtBytes(n) {
  if (!isNum(n)) return '—';
  if (n < 1024) return n + ' B';
  const [d, u] = n < 1048576 ? [1024, 'KiB'] : n < 1073741824 ? [1048576, 'MiB'] : [1073741824, 'GiB'];
  return sig(n / d) + ' ' + u;
}

const two = (n) => String(Math.floor(n)).padStart(2, '0');

// 4.2 s, 45 s, 3 min 05 s, 2 h 10 min, 1 d 3 h
export function fmtDuration(s) {
  if (!isNum(s) || s < 0) return '—';
  if (s < 10) return sig(s, 2) + ' s';
  s = Math.round(s);
  if (s < 60) return s + ' s';
  if (s < 3600) return Math.floor(s / 60) + ' min ' + two(s % 60) + ' s';
  if (s < 86400) return Math.floor(s / 3600) + ' h ' + two((s % 3600) / 60) + ' min';
  return Math.floor(s / 86400) + ' d ' + Math.floor((s % 86400) / 3600) + ' h';
}

// ~45 s, ~3 min, ~1 h 20 min; unknown without an estimate.
export function fmtEta(s) {
  if (!isNum(s) || s < 0) return 'unknown';
  if (s < 60) return '~' + Math.max(1, Math.round(s)) + ' s';
  if (s < 3600) return '~' + Math.round(s / 60) + ' min';
  return '~' + Math.floor(s / 3600) + ' h ' + Math.round((s % 3600) / 60) + ' min';
}

// Epoch seconds or an ISO string -> Date (null for 0, null, junk).
function toDate(v) {
  if (!v) return null;
  const d = new Date(typeof v === 'number' ? v * 1000 : v);
  return Number.isNaN(d.getTime()) ? null : d;
}

// 2026-11-30 04:30 UTC
export function fmtDate(v, seconds = false) {
  const d = toDate(v);
  if (!d) return '—';
  const iso = d.toISOString();
  return iso.slice(0, 10) + ' ' + iso.slice(11, seconds ? 19 : 16) + ' UTC';
}

// <time datetime=ISO title=full>text</time>
export function timeEl(v, text) {
  const d = toDate(v);
  return d ? h('time', { datetime: d.toISOString(), title: fmtDate(v, true) }, text || fmtDate(v)) : none();
}

// "12 s ago" for epoch seconds t seen from now.
export function fmtAgo(t, now) {
  if (!t) return 'never';
  const s = Math.max(0, Math.round(now - t));
  if (s < 90) return s + ' s ago';
  if (s < 5400) return Math.round(s / 60) + ' min ago';
  return s < 172800 ? Math.round(s / 3600) + ' h ago' : Math.round(s / 86400) + ' d ago';
}

export const short = (c) => (c ? String(c).slice(0, 12) : '');
// A commit: 12 characters, the whole hash in title.
export const commitEl = (c) => (c ? h('code', { class: 'commit', title: String(c) }, short(c)) : none());

export const seriesLink = (id, text) => (id === null || id === undefined ? none() : h('a', { href: '/series/' + encodeURIComponent(id) }, text || 'series ' + id));

// <progress> with its percentage as text too.
export function progressEl(p) {
  if (!isNum(p)) return none();
  const v = Math.max(0, Math.min(100, p));
  return h('span', { class: 'progress' }, h('progress', { max: '100', value: v, 'aria-label': v + ' percent' }, v + ' %'), ' ' + v + ' %');
}

// Any JSON value as text; objects as nested <dl> (dl > div > dt + dd),
// the keys people look for first.
const FIRST = ['host_check', 'governor', 'turbo', 'smt', 'isolated_cpus', 'isolated', 'nohz_full', 'load', 'busy', 'warning',
  'dpdk_version', 'compiler', 'build_mode', 'build', 'harness', 'sandbox', 'model', 'cores', 'kernel'];
const rank = (k) => (FIRST.includes(k) ? FIRST.indexOf(k) : FIRST.length);
function valueEl(v, depth) {
  if (v === null || v === undefined) return none();
  if (depth > 8) return '…';
  if (Array.isArray(v)) {
    if (!v.length) return none('(none)');
    return v.every((x) => x === null || typeof x !== 'object') ? v.map(String).join(', ') : h('ol', null, v.map((x) => h('li', null, valueEl(x, depth + 1))));
  }
  if (typeof v === 'object') return dlOf(v, depth + 1);
  return typeof v === 'boolean' ? (v ? 'yes' : 'no') : String(v);
}
export function dlOf(o, depth = 0, cls) {
  const keys = Object.keys(o).sort((a, b) => rank(a) - rank(b));
  return keys.length ? h('dl', { class: cls }, keys.map((k) => h('div', null, h('dt', null, k), h('dd', null, valueEl(o[k], depth))))) : none('(empty)');
}

// -------------------------------------------------------------- states

const TONE = {};
for (const [tone, states] of Object.entries({
  good: 'success pass no-change ok done idle complete sent online',
  bad: 'fail regression offline failed patched-build-failure error drained',
  warn: 'warning inconclusive noisy missing stale suspected drift infra-error apply-failure already-applied base-build-failure bench-failure',
  info: 'improvement busy running leased recheck confirmed',
  wait: 'pending queued held incomplete new connecting',
})) for (const s of states.split(' ')) TONE[s] = tone;

// A coloured badge that always says its state in words.
export function badge(state, label) {
  const s = state === null || state === undefined || state === '' ? 'none' : String(state);
  return h('span', { class: 'badge tone-' + (TONE[s] || 'muted'), data: { state: s } }, label === undefined ? s : label);
}

// --------------------------------------------------------------- fetch

export class HttpError extends Error {
  constructor(status, message) { super(message); this.status = status; }
}

async function request(url, opts) {
  let r;
  try { r = await fetch(url, opts); } catch (e) { throw new HttpError(0, 'cannot reach the controller (' + e.message + ')'); }
  const json = (r.headers.get('Content-Type') || '').includes('json');
  const body = await (json ? r.json() : r.text()).catch(() => null);
  if (r.ok) return body;
  const msg = body && body.error ? body.error : typeof body === 'string' && body.trim() ? body.trim().slice(0, 300) : r.statusText;
  throw new HttpError(r.status, 'HTTP ' + r.status + ': ' + msg);
}

export const getJSON = (url) => request(url, { headers: { Accept: 'application/json' } });

// POST with the admin token, only ever as Authorization: Bearer.
export async function postJSON(url, body) {
  const headers = { 'Content-Type': 'application/json', Accept: 'application/json' };
  if (token()) headers.Authorization = 'Bearer ' + token();
  try { return await request(url, { method: 'POST', headers, body: JSON.stringify(body || {}), credentials: 'omit' }); } catch (e) {
    if (e.status === 401) e.message += ' (the admin token was refused: log out and enter it again)';
    if (e.status === 403) e.message += ' (no admin token is configured on the controller)';
    throw e;
  }
}

let metaP = null;
export const meta = () => (metaP = metaP || getJSON('/api/v1/meta'));

// --------------------------------------------------------- page status

const errorBox = () => document.getElementById('error');
export function showError(msg) {
  const e = errorBox();
  if (e) { e.textContent = visible(msg); e.hidden = false; }
}
export function clearError() {
  const e = errorBox();
  if (e && !e.hidden) { e.textContent = ''; e.hidden = true; }
}
// ready() waits for the regression banner, so that a page that says it is
// ready shows it (or shows that there is none).
export const ready = () => { alerts().finally(() => { document.body.dataset.ready = '1'; }); };
export const updated = () => { document.body.dataset.updated = String(Date.now()); };

// fn() now and every ms after it ends; errors shown, polling goes on.
export function poll(fn, ms = 5000) {
  const tick = async () => {
    try { await fn(); clearError(); } catch (e) { showError(e.message); }
    ready();
    setTimeout(tick, ms);
  };
  tick();
}

// Re-rendering a live table loses focus; put it back on the same control.
export async function keepFocus(root, fn) {
  const a = document.activeElement;
  const sel = a && root.contains(a) ? (a.id ? '#' + CSS.escape(a.id) : a.dataset.job ? `.cancel-job[data-job="${CSS.escape(a.dataset.job)}"]` : null) : null;
  await fn();
  const b = sel && root.querySelector(sel);
  if (b) b.focus();
}

// --------------------------------------------------------------- admin

const KEY = 'perfgate.admin-token';
export function token() {
  try { return sessionStorage.getItem(KEY) || ''; } catch (e) { return ''; }
}
function setToken(t) {
  try { if (t) sessionStorage.setItem(KEY, t); else sessionStorage.removeItem(KEY); } catch (e) { /* storage off */ }
}

// The login/logout control in #admin-area when the controller has an
// admin token configured; onChange() after the token changed.
let adminOn = false;
// Whether admin controls show: the controller has an admin token and this tab holds one.
export const admin = () => adminOn && !!token();

export function adminControls(m, onChange) {
  const area = document.getElementById('admin-area');
  adminOn = !!(m && m.admin);
  if (!area || !adminOn) return;
  const btn = (id, text) => h('button', { id, type: 'button', class: 'small' }, text);
  const render = (focus) => {
    if (token()) {
      const out = btn('admin-logout', 'Log out');
      out.addEventListener('click', () => { setToken(''); render('#admin-login'); onChange(); });
      fill(area, h('span', { class: 'admin-on' }, 'Admin token set (this tab)'), ' ', out);
    } else {
      const login = btn('admin-login', 'Admin login');
      const input = h('input', { id: 'admin-token', type: 'password', autocomplete: 'off', required: true });
      const cancel = btn(null, 'Cancel');
      const form = h('form', { id: 'admin', hidden: true }, h('label', { for: 'admin-token' }, 'Admin token'), input,
        h('button', { type: 'submit', class: 'small' }, 'Use token'), cancel,
        h('span', { class: 'hint' }, 'kept in this tab only, sent as an Authorization header'));
      const show = (on) => { form.hidden = !on; login.setAttribute('aria-expanded', String(on)); (on ? input : login).focus(); };
      login.setAttribute('aria-controls', 'admin');
      login.setAttribute('aria-expanded', 'false');
      login.addEventListener('click', () => show(form.hidden));
      cancel.addEventListener('click', () => show(false));
      form.addEventListener('submit', (ev) => {
        ev.preventDefault();
        if (!input.value.trim()) return;
        setToken(input.value.trim());
        render('#admin-logout');
        onChange();
      });
      fill(area, login, form);
    }
    if (focus) $(focus, area).focus();
  };
  render();
}

export const CANCELLABLE = new Set(['queued', 'leased', 'running']);

// button.cancel-job[data-job=ID], the answer shown beside it.
export function cancelButton(id, after) {
  const status = h('span', { class: 'cancel-status', role: 'status' });
  const b = h('button', { type: 'button', class: 'cancel-job small danger', data: { job: id } }, 'Cancel job ' + id);
  b.addEventListener('click', async () => {
    b.disabled = true;
    status.textContent = 'cancelling…';
    try {
      await postJSON('/api/v1/jobs/' + encodeURIComponent(id) + '/cancel', { reason: 'cancelled from the dashboard' });
      status.textContent = 'cancelled';
      if (after) after();
    } catch (e) {
      status.textContent = visible(e.message);
      b.disabled = false;
    }
  });
  return h('span', { class: 'cancel' }, b, ' ', status);
}

// ------------------------------------------- main-branch regression banner

// The change points that are located regressions: state 'confirmed' and
// a negative effect (worse, whatever the metric's direction).
export const isRegression = (c) => c && c.state === 'confirmed' && typeof c.effect_pct === 'number' && c.effect_pct < 0;

// "TREE/BRANCH BENCHMARK/METRIC -8.1% at COMMIT12 on HOST (BUILD MODE)"
export function regressionText(c) {
  return `${c.tree}/${c.branch} ${c.benchmark}/${c.metric} ${fmtPct(c.effect_pct)} at ` +
    `${short(c.located_commit || c.commit_after)} on ${c.host} (${c.build_mode})`;
}

// div#change-alert[data-count=N] for the located regressions cps (null
// when there is none): one is told in full, more are counted; either
// links to the change points page.
export function alertEl(cps) {
  const regs = (cps || []).filter(isRegression);
  if (!regs.length) return null;
  const one = regs.length === 1;
  const href = '/changes?state=confirmed' + (one ? '#cp-' + encodeURIComponent(regs[0].id) : '');
  return h('div', { id: 'change-alert', class: 'alert', role: 'status', data: { count: regs.length, cp: one ? regs[0].id : undefined } },
    h('strong', null, one ? 'main-branch regression: ' : regs.length + ' main-branch regressions'),
    one ? h('span', { class: 'alert-text' }, regressionText(regs[0])) : null,
    ' ', h('a', { href, class: 'alert-link' }, one ? 'details' : 'see the change points'));
}

// Fetched once per page: the banner under the header of every page.
let alertsP = null;
function alerts() {
  if (alertsP) return alertsP;
  const header = document.querySelector('header.site');
  if (!header) return (alertsP = Promise.resolve());
  alertsP = getJSON('/api/v1/change-points?state=confirmed&limit=1000').then((ans) => {
    const el = alertEl(ans && ans.change_points);
    document.body.dataset.alerts = el ? el.dataset.count : '0';
    if (el) header.after(el);
  }, () => { document.body.dataset.alerts = 'error'; });
  return alertsP;
}
alerts();
