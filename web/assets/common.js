// perfgate dashboard: helpers shared by every page.
//
// SAFETY RULE: every string that comes from the data (titles, names,
// descriptions, logs, facts...) is rendered as text: through h() below
// (textContent / createTextNode), never through innerHTML, outerHTML,
// insertAdjacentHTML or document.write.  h() refuses on* and *HTML props,
// and drops links whose scheme is not http(s) or same origin.  The CSP
// (script-src 'self'; style-src 'self') forbids inline script and style="";
// setting el.style from here is fine.

// ---------------------------------------------------------------- text

// Code points that would overwrite or reorder what is shown (C0/C1
// controls, bidi embeddings/overrides/isolates, LRM/RLM, ALM, U+2028/9),
// as lib/sanitize.c lists them; shown as \xHH / \uHHHH.  In a block (pre)
// newline and tab stay, and CR before LF.
const UNSAFE = /[\u0000-\u001f\u007f-\u009f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]/g;
function esc(c) {
  const n = c.charCodeAt(0);
  return n < 0x80 ? '\\x' + n.toString(16).padStart(2, '0') : '\\u' + n.toString(16).padStart(4, '0');
}
export function visible(s, block = false) {
  s = String(s);
  return s.replace(UNSAFE, (c, i) => {
    if (block && (c === '\n' || c === '\t' || (c === '\r' && s[i + 1] === '\n'))) return c;
    return esc(c);
  });
}

// A URL we are willing to put in href: http(s) or same origin.
export function safeUrl(u) {
  if (u === null || u === undefined || u === '') return null;
  try {
    const url = new URL(String(u), location.origin);
    if (url.protocol === 'http:' || url.protocol === 'https:') return url.href;
  } catch (e) { /* not a URL */ }
  return null;
}

// ------------------------------------------------------------- elements

const BOOL_PROPS = new Set(['hidden', 'checked', 'disabled', 'open', 'required', 'selected']);

// h('a', {class: 'x', href: '/series/7', data: {field: 'title'}}, 'text', node, [more])
// props: class, text (line text), block (pre text, keeps newlines), data
// (dataset), on ({event: fn}), value, the booleans above, other attributes.
export function h(tag, props, ...kids) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(props || {})) {
    if (v === undefined || v === null) continue;
    if (/^on./i.test(k) || /html|srcdoc/i.test(k)) throw new Error('h: refusing ' + k);
    if (k === 'class') e.className = Array.isArray(v) ? v.filter(Boolean).join(' ') : v;
    else if (k === 'text') e.textContent = visible(v);
    else if (k === 'block') e.textContent = visible(v, true);
    else if (k === 'data') {
      for (const [dk, dv] of Object.entries(v)) if (dv !== undefined) e.dataset[dk] = dv === null ? '' : String(dv);
    } else if (k === 'on') {
      for (const [ev, fn] of Object.entries(v)) e.addEventListener(ev, fn);
    } else if (k === 'value') e.value = String(v);
    else if (BOOL_PROPS.has(k)) e[k] = !!v;
    else if (k === 'href' || k === 'src') {
      const u = safeUrl(v);
      if (u) e.setAttribute(k, String(v).startsWith('/') ? String(v) : u);
    } else if (v !== false) e.setAttribute(k, v === true ? '' : String(v));
  }
  add(e, kids);
  return e;
}

function add(e, kids) {
  for (const k of kids) {
    if (k === null || k === undefined || k === false) continue;
    if (Array.isArray(k)) add(e, k);
    else if (k instanceof Node) e.appendChild(k);
    else e.appendChild(document.createTextNode(visible(k)));
  }
}

// Replace el's children with kids (nulls and arrays as h() takes them).
export function fill(el, ...kids) {
  el.replaceChildren();
  add(el, kids);
  return el;
}

export const $ = (sel, root = document) => root.querySelector(sel);

// A table that scrolls sideways on a narrow screen; keyboard-scrollable.
export function wrap(table, label) {
  return h('div', { class: 'table-wrap', tabindex: '0', role: 'region', 'aria-label': label || 'table' }, table);
}

// <table> with a caption and a header row of th[scope=col].
export function table(attrs, caption, heads) {
  return h('table', attrs,
    caption ? h('caption', null, caption) : null,
    h('thead', null, h('tr', null, heads.map((x) => (x instanceof Node ? x : h('th', { scope: 'col' }, x))))),
    h('tbody'));
}

// A cell for a number: data-value is exactly String(v) ("" for null).
export function num(v, fmt = fmtSI, field, tag = 'td', extra = {}) {
  const ok = typeof v === 'number' && Number.isFinite(v);
  return h(tag, { class: 'num', ...extra, data: { ...(extra.data || {}), field, value: v === null || v === undefined ? '' : String(v) }, title: ok ? String(v) : null },
    ok ? fmt(v) : '—');
}

// ----------------------------------------------------------- formatting

const SI = [[1e12, 'T'], [1e9, 'G'], [1e6, 'M'], [1e3, 'k']];

// 1.23 G, 456 M, 12.3 k, 41.5, 0.0123: three significant digits.
export function fmtSI(v) {
  if (typeof v !== 'number' || !Number.isFinite(v)) return '—';
  const a = Math.abs(v);
  for (const [f, s] of SI) if (a >= f * 0.9995) return +(v / f).toPrecision(3) + '\u202f' + s;
  if (a === 0) return '0';
  return String(+v.toPrecision(3));
}

export function fmtPct(v, digits = 1) {
  if (typeof v !== 'number' || !Number.isFinite(v)) return '—';
  const r = v.toFixed(digits);
  if (+r === 0) return (0).toFixed(digits) + '%';
  return (v > 0 ? '+' : '') + r + '%';
}

// p with two significant digits.
export function fmtP(p) {
  if (typeof p !== 'number' || !Number.isFinite(p)) return '—';
  if (p >= 1) return '1';
  return String(+p.toPrecision(2));
}

export function fmtBytes(n) {
  if (typeof n !== 'number' || !Number.isFinite(n)) return '—';
  if (n < 1024) return n + ' B';
  if (n < 1048576) return +(n / 1024).toPrecision(3) + ' KiB';
  if (n < 1073741824) return +(n / 1048576).toPrecision(3) + ' MiB';
  return +(n / 1073741824).toPrecision(3) + ' GiB';
}

// 45 s, 3 min 05 s, 2 h 10 min.
export function fmtDuration(s) {
  if (typeof s !== 'number' || !Number.isFinite(s) || s < 0) return '—';
  if (s < 10) return +s.toFixed(1) + ' s';
  s = Math.round(s);
  if (s < 60) return s + ' s';
  if (s < 3600) return Math.floor(s / 60) + ' min ' + String(s % 60).padStart(2, '0') + ' s';
  if (s < 86400) return Math.floor(s / 3600) + ' h ' + String(Math.floor((s % 3600) / 60)).padStart(2, '0') + ' min';
  return Math.floor(s / 86400) + ' d ' + Math.floor((s % 86400) / 3600) + ' h';
}

export function fmtEta(s) {
  if (typeof s !== 'number' || !Number.isFinite(s) || s < 0) return 'unknown';
  if (s < 60) return '~' + Math.max(1, Math.round(s)) + ' s';
  if (s < 3600) return '~' + Math.round(s / 60) + ' min';
  return '~' + Math.floor(s / 3600) + ' h ' + Math.round((s % 3600) / 60) + ' min';
}

// Epoch seconds or an ISO string -> Date (null for 0, null, junk).
export function toDate(v) {
  if (v === null || v === undefined || v === 0 || v === '') return null;
  const d = typeof v === 'number' ? new Date(v * 1000) : new Date(v);
  return Number.isNaN(d.getTime()) ? null : d;
}

// 2026-11-30 04:30 UTC
export function fmtDate(v, seconds = false) {
  const d = toDate(v);
  if (!d) return '—';
  const iso = d.toISOString();
  return iso.slice(0, 10) + ' ' + iso.slice(11, seconds ? 19 : 16) + ' UTC';
}

// <time datetime=ISO title=...>text</time>
export function timeEl(v, text, seconds) {
  const d = toDate(v);
  if (!d) return h('span', { class: 'none' }, '—');
  return h('time', { datetime: d.toISOString(), title: fmtDate(v, true) }, text || fmtDate(v, seconds));
}

// "12 s ago" for epoch seconds t seen from now (epoch seconds).
export function fmtAgo(t, now) {
  if (!t) return 'never';
  const s = Math.max(0, Math.round(now - t));
  if (s < 90) return s + ' s ago';
  if (s < 5400) return Math.round(s / 60) + ' min ago';
  if (s < 172800) return Math.round(s / 3600) + ' h ago';
  return Math.round(s / 86400) + ' d ago';
}

export const short = (c, n = 12) => (c ? String(c).slice(0, n) : '');

// A commit, short, the whole hash in title.
export function commitEl(c) {
  if (!c) return h('span', { class: 'none' }, '—');
  return h('code', { class: 'commit', title: String(c) }, short(c));
}

// ---------------------------------------------------------------- states

const TONE = {};
for (const [tone, states] of Object.entries({
  good: 'success pass no-change ok done idle complete sent recorded online',
  bad: 'fail regression offline failed patched-build-failure error',
  warn: 'warning inconclusive noisy missing stale suspected infra-error apply-failure base-build-failure bench-failure',
  info: 'improvement busy running leased recheck',
  wait: 'pending queued held incomplete new',
  muted: 'superseded disabled cancelled unknown none',
})) for (const s of states.split(' ')) TONE[s] = tone;

export const tone = (state) => TONE[state] || 'muted';

// A coloured badge that always says its state in words.
export function badge(state, label) {
  const s = state === null || state === undefined || state === '' ? 'none' : String(state);
  return h('span', { class: ['badge', 'tone-' + tone(s)], data: { state: s } }, label === undefined ? s : label);
}

// ---------------------------------------------------------------- fetch

export class HttpError extends Error {
  constructor(status, message) { super(message); this.status = status; }
}

async function answer(r) {
  const type = r.headers.get('Content-Type') || '';
  let body = null;
  if (type.includes('json')) { try { body = await r.json(); } catch (e) { body = null; } } else {
    try { body = await r.text(); } catch (e) { body = null; }
  }
  if (!r.ok) {
    const msg = body && typeof body === 'object' && body.error ? body.error : (typeof body === 'string' && body.trim() ? body.trim().slice(0, 300) : r.statusText);
    throw new HttpError(r.status, 'HTTP ' + r.status + ': ' + msg);
  }
  return body;
}

export async function getJSON(url) {
  let r;
  try { r = await fetch(url, { headers: { Accept: 'application/json' }, credentials: 'same-origin' }); } catch (e) {
    throw new HttpError(0, 'cannot reach the controller (' + e.message + ')');
  }
  return answer(r);
}

// POST with the admin token (only ever as Authorization: Bearer).
export async function postJSON(url, body) {
  const headers = { 'Content-Type': 'application/json', Accept: 'application/json' };
  const t = token();
  if (t) headers.Authorization = 'Bearer ' + t;
  let r;
  try { r = await fetch(url, { method: 'POST', headers, body: JSON.stringify(body || {}), credentials: 'omit' }); } catch (e) {
    throw new HttpError(0, 'cannot reach the controller (' + e.message + ')');
  }
  try { return await answer(r); } catch (e) {
    if (e.status === 401) e.message += ' (the admin token was refused: log out and enter it again)';
    if (e.status === 403) e.message += ' (no admin token is configured on the controller)';
    throw e;
  }
}

let metaP = null;
export const meta = () => (metaP = metaP || getJSON('/api/v1/meta'));

// ---------------------------------------------------------- page status

export function showError(msg) {
  const e = document.getElementById('error');
  if (!e) return;
  e.textContent = visible(msg);
  e.hidden = false;
}
export function clearError() {
  const e = document.getElementById('error');
  if (e && !e.hidden) { e.textContent = ''; e.hidden = true; }
}
export const ready = () => { document.body.dataset.ready = '1'; };
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
  let sel = null;
  if (a && root.contains(a)) {
    if (a.id) sel = '#' + CSS.escape(a.id);
    else if (a.dataset.job && a.classList.contains('cancel-job')) sel = 'button.cancel-job[data-job="' + CSS.escape(a.dataset.job) + '"]';
  }
  await fn();
  if (sel) { const b = root.querySelector(sel); if (b) b.focus(); }
}

// ----------------------------------------------------------------- admin

const TOKEN_KEY = 'perfgate.admin-token';
export function token() {
  try { return sessionStorage.getItem(TOKEN_KEY) || ''; } catch (e) { return ''; }
}
function setToken(t) {
  try { if (t) sessionStorage.setItem(TOKEN_KEY, t); else sessionStorage.removeItem(TOKEN_KEY); } catch (e) { /* storage off */ }
}

// The login/logout control in #admin-area, when the controller has an
// admin token configured.  onChange() runs after the token changed.
export function adminControls(m, onChange) {
  const area = document.getElementById('admin-area');
  if (!area || !m || !m.admin) return;
  const render = (focus) => {
    area.replaceChildren();
    if (token()) {
      const out = h('button', { id: 'admin-logout', type: 'button', class: 'small' }, 'Log out');
      out.addEventListener('click', () => { setToken(''); render('#admin-login'); onChange(); });
      area.append(h('span', { class: 'admin-on' }, 'Admin token set (this tab)'), ' ', out);
    } else {
      const btn = h('button', { id: 'admin-login', type: 'button', class: 'small', 'aria-expanded': 'false', 'aria-controls': 'admin' }, 'Admin login');
      const input = h('input', { id: 'admin-token', name: 'token', type: 'password', autocomplete: 'off', spellcheck: 'false', required: true });
      const cancel = h('button', { type: 'button', class: 'small' }, 'Cancel');
      const form = h('form', { id: 'admin', hidden: true },
        h('label', { for: 'admin-token' }, 'Admin token'), input,
        h('button', { type: 'submit', class: 'small' }, 'Use token'), cancel,
        h('span', { class: 'hint' }, 'kept in this tab only, sent as an Authorization header'));
      btn.addEventListener('click', () => {
        form.hidden = !form.hidden;
        btn.setAttribute('aria-expanded', String(!form.hidden));
        if (!form.hidden) input.focus();
      });
      cancel.addEventListener('click', () => { form.hidden = true; btn.setAttribute('aria-expanded', 'false'); btn.focus(); });
      form.addEventListener('submit', (ev) => {
        ev.preventDefault();
        const t = input.value.trim();
        if (!t) return;
        setToken(t);
        render('#admin-logout');
        onChange();
      });
      area.append(btn, form);
    }
    if (focus) { const f = area.querySelector(focus); if (f) f.focus(); }
  };
  render();
}

export const CANCELLABLE = new Set(['queued', 'leased', 'running']);

// button.cancel-job[data-job=ID]; the answer shown beside it.
export function cancelButton(job, after) {
  const status = h('span', { class: 'cancel-status', role: 'status' });
  const b = h('button', { type: 'button', class: ['cancel-job', 'small', 'danger'], data: { job: job.id } }, 'Cancel job ' + job.id);
  b.addEventListener('click', async () => {
    b.disabled = true;
    status.textContent = 'cancelling…';
    try {
      await postJSON('/api/v1/jobs/' + encodeURIComponent(job.id) + '/cancel', { reason: 'cancelled from the dashboard' });
      status.textContent = 'cancelled';
      if (after) after();
    } catch (e) {
      status.textContent = visible(e.message);
      b.disabled = false;
    }
  });
  return h('span', { class: 'cancel' }, b, ' ', status);
}

export const seriesLink = (id, text) =>
  id === null || id === undefined ? h('span', { class: 'none' }, '—') : h('a', { href: '/series/' + encodeURIComponent(id) }, text || 'series ' + id);

// Any JSON value as text; objects as nested <dl>, known keys first.
const FIRST = ['host_check', 'governor', 'turbo', 'smt', 'isolated_cpus', 'isolated', 'nohz_full', 'load', 'busy', 'busy_share', 'warning',
  'dpdk_version', 'compiler', 'build_mode', 'build', 'harness', 'sandbox', 'warnings', 'model', 'vendor', 'cores', 'kernel'];
const rank = (k) => { const i = FIRST.indexOf(k); return i < 0 ? FIRST.length : i; };

function valueEl(v, depth) {
  if (v === null || v === undefined) return h('span', { class: 'none' }, '—');
  if (depth > 8) return '…';
  if (Array.isArray(v)) {
    if (!v.length) return h('span', { class: 'none' }, '(none)');
    if (v.every((x) => x === null || typeof x !== 'object')) return v.map((x) => String(x)).join(', ');
    return h('ol', null, v.map((x) => h('li', null, valueEl(x, depth + 1))));
  }
  if (typeof v === 'object') return dlOf(v, depth + 1);
  if (typeof v === 'boolean') return v ? 'yes' : 'no';
  return String(v);
}

export function dlOf(o, depth = 0, cls) {
  const keys = Object.keys(o).sort((a, b) => rank(a) - rank(b));
  if (!keys.length) return h('span', { class: 'none' }, '(empty)');
  return h('dl', { class: cls }, keys.map((k) => h('div', null, h('dt', null, k), h('dd', null, valueEl(o[k], depth)))));
}

// <progress> with its percentage as text too.
export function progressEl(p) {
  if (typeof p !== 'number' || !Number.isFinite(p)) return h('span', { class: 'none' }, '—');
  const v = Math.max(0, Math.min(100, p));
  return h('span', { class: 'progress' }, h('progress', { max: '100', value: String(v), 'aria-label': v + ' percent' }, v + ' %'), ' ', v + ' %');
}
