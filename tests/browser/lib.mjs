// SPDX-License-Identifier: MIT
// What the browser tests share (run through tests/browser/run.sh, which
// sets PG_BUILD, PG_TOP, PG_BROWSER_MODULES and PG_CHROMIUM):
//
//   assertions   check, eq, close, fail: a TestFailure with a clear message
//   launch()     Debian's chromium, headless, through playwright-core
//   Harness      what runner.mjs hands each test: h.page() opens a watched
//                page; every console error, page error, CSP violation,
//                failed request, HTTP error and request to another origin
//                than h.origin fails the test at its end
//   Watched      a page with its watch: goto, ready (data-ready = "1"),
//                screenshot, take (the problems so far, cleared)
//   sql, sqlOne  the sqlite3 CLI's -json answer on a store
//   ctl          a perfgate-controller command (argv, exit 0 or fail)
//   startController  `perfgate-controller serve` on loopback, its URL read
//                from its log; stop() sends SIGTERM and wants exit 0
//   loadFixture  tests/browser/fixture/ into a scratch store and data dir
//   demoTree     a git tree at VERSION 22.11.0 and the demo profile on it
//   hostileMbox  a real mail whose Subject and From name are hostile
//   sanitize     lib/sanitize.h's pg_sanitize() (LINE or BLOCK), in JS
//   poll         wait for a condition with a generous deadline (a bound
//                against hanging, never a measurement)
import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';

function need(name) {
	const v = process.env[name];
	if (!v)
		throw new Error(`${name} is not set: run through tests/browser/run.sh`);
	return v;
}

export const BUILD = need('PG_BUILD');
export const TOP = need('PG_TOP');
export const CTL = path.join(BUILD, 'perfgate-controller');
export const CHROMIUM = process.env.PG_CHROMIUM || '/usr/bin/chromium';
export const SCREENSHOTS = path.join(BUILD, 'screenshots');
// PG_WEB_FIXTURE: another fixture directory (as scripts/web-fixture.sh --out makes).
export const FIXTURE = process.env.PG_WEB_FIXTURE || path.join(TOP, 'tests/browser/fixture');
const MODULES = need('PG_BROWSER_MODULES');

// Deadlines: bounds against a hang, generous on a busy 2-core machine.
export const DEADLINE_MS = 60000;

// ---- assertions -------------------------------------------------------------

export class TestFailure extends Error {
	constructor(msg) {
		super(msg);
		this.name = 'TestFailure';
	}
}

export function fail(msg) {
	throw new TestFailure(msg);
}

export function check(cond, msg) {
	if (!cond)
		fail(typeof msg === 'function' ? msg() : msg);
}

function show(v) {
	if (typeof v === 'string')
		return JSON.stringify(v);
	try {
		return JSON.stringify(v);
	} catch {
		return String(v);
	}
}

export function eq(got, want, what) {
	const g = show(got), w = show(want);
	if (g !== w)
		fail(`${what}: got ${g}, expected ${w}`);
}

// close(got, want, what[, rel]): numbers equal within a relative
// tolerance (1e-9 by default); null only equals null.  got may be the
// string of a data-value attribute ("" for null).
export function close(got, want, what, rel = 1e-9) {
	if (typeof got === 'string')
		got = got === '' ? null : Number(got);
	if (want === null || want === undefined || got === null) {
		if (!((want === null || want === undefined) && got === null))
			fail(`${what}: got ${show(got)}, expected ${show(want)}`);
		return;
	}
	if (!Number.isFinite(got))
		fail(`${what}: got ${show(got)}, not a number (expected ${want})`);
	const scale = Math.max(Math.abs(got), Math.abs(want));
	if (Math.abs(got - want) > rel * scale)
		fail(`${what}: got ${got}, expected ${want} (relative difference ` +
		     `${(Math.abs(got - want) / scale).toExponential(2)} > ${rel})`);
}

// poll(what, fn[, deadline]): call async fn until it returns a truthy
// value, which is returned; fail after the deadline.
export async function poll(what, fn, deadline = DEADLINE_MS) {
	const end = Date.now() + deadline;
	for (;;) {
		const v = await fn();
		if (v)
			return v;
		if (Date.now() > end)
			fail(`timed out after ${deadline / 1000} s waiting for ${what}`);
		await new Promise((r) => setTimeout(r, 200));
	}
}

// ---- processes and the store ------------------------------------------------------

// run(argv, opts): spawnSync with an argv (never a shell); fails unless it
// exits 0; returns stdout as a string.
export function run(argv, opts = {}) {
	const r = spawnSync(argv[0], argv.slice(1), { encoding: 'utf8', maxBuffer: 256 << 20, ...opts });
	if (r.error)
		fail(`${argv.join(' ')}: ${r.error.message}`);
	if (r.status !== 0)
		fail(`${argv.join(' ')} exited ${r.status ?? 'on signal ' + r.signal}:\n${r.stderr || ''}${r.stdout || ''}`);
	return r.stdout;
}

// sql(db, query): the rows as objects (sqlite3 -json; no rows is []).
export function sql(db, query) {
	const out = run(['sqlite3', '-bail', '-json', db, query]);
	if (out.trim() === '')
		return [];
	try {
		return JSON.parse(out);
	} catch (e) {
		fail(`sqlite3 -json '${query}': not JSON (${e.message}): ${out.slice(0, 200)}`);
	}
}

// sqlOne(db, query): the first column of the only row.
export function sqlOne(db, query) {
	const rows = sql(db, query);
	check(rows.length === 1, `sqlite3 '${query}': ${rows.length} rows, expected 1`);
	return Object.values(rows[0])[0];
}

// ctl(config, ...args): a perfgate-controller command on a configuration.
export function ctl(config, ...args) {
	return run([CTL, '--config', config, ...args]);
}

// The text of hex digits as the UTF-8 bytes they are, decoded the way
// pg_sanitize() decodes (U+FFFD per maximal ill-formed subpart).
export function hexText(hex) {
	return new TextDecoder('utf-8').decode(Buffer.from(hex, 'hex'));
}

// ---- the sanitiser (lib/sanitize.h, in JS) ---------------------------------------------

function unsafe(c, mode) {
	if (c < 0x20)
		return !(mode === 'block' && (c === 0x0a || c === 0x09));
	if (c >= 0x7f && c <= 0x9f)
		return true;
	return c === 0x061c || c === 0x200e || c === 0x200f || c === 0x2028 || c === 0x2029 ||
		(c >= 0x202a && c <= 0x202e) || (c >= 0x2066 && c <= 0x2069);
}

// sanitize(text | Buffer, 'line' | 'block'): what pg_sanitize() makes of
// it: C0 and DEL as \xHH, C1, bidi controls and U+2028/9 as \uHHHH,
// invalid UTF-8 as U+FFFD; a block keeps LF, TAB and CR before LF.
export function sanitize(input, mode = 'line') {
	const text = typeof input === 'string' ? input : new TextDecoder('utf-8').decode(input);
	const cps = Array.from(text);
	let out = '';
	for (let i = 0; i < cps.length; i++) {
		const c = cps[i].codePointAt(0);
		if (mode === 'block' && c === 0x0d && cps[i + 1] === '\n')
			out += '\r';
		else if (!unsafe(c, mode))
			out += cps[i];
		else if (c < 0x80)
			out += '\\x' + c.toString(16).padStart(2, '0');
		else
			out += '\\u' + c.toString(16).padStart(4, '0');
	}
	return out;
}

// ---- the controller ----------------------------------------------------------------

// startController({dir, db, dataDir, profilesDir, webDir, adminToken, api}):
// writes dir/controller.json (webDir null leaves "api.web_dir" out; api
// adds members to the "api" section) and dir/admin-token (mode 0600), starts
// `serve` with its log in dir/ctl.log and waits for "api: listening on
// http://127.0.0.1:PORT".  Returns {url, origin, config, log, proc, stop}.
export async function startController(o) {
	const dir = o.dir;
	const config = path.join(dir, 'controller.json');
	const log = path.join(dir, 'ctl.log');
	const api = { listen: '127.0.0.1:0', ...(o.api || {}) };
	if (o.adminToken) {
		const tok = path.join(dir, 'admin-token');
		fs.writeFileSync(tok, o.adminToken + '\n', { mode: 0o600 });
		api.admin_token_file = tok;
	}
	const cfg = {
		db: o.db,
		data_dir: o.dataDir,
		profiles_dir: o.profilesDir || path.join(TOP, 'profiles'),
		profiles: ['demo.json'],
		api,
	};
	const webDir = o.webDir === undefined ? path.join(TOP, 'web') : o.webDir;
	if (webDir !== null)
		api.web_dir = webDir;
	fs.writeFileSync(config, JSON.stringify(cfg, null, 2) + '\n');
	run([CTL, '--config', config, '--check-config'], { stdio: ['ignore', 'ignore', 'pipe'] });

	const fd = fs.openSync(log, 'a');
	const proc = spawn(CTL, ['--config', config, '-l', 'info,api=debug', 'serve'],
			   { stdio: ['ignore', fd, fd] });
	fs.closeSync(fd);
	let exited = null;
	const done = new Promise((resolve) => proc.on('exit', (code, signal) => {
		exited = { code, signal };
		resolve(exited);
	}));
	proc.on('error', (e) => { exited = { code: -1, signal: e.message }; });
	// Never left behind when this process ends without stopping it.
	const reap = () => { if (!exited) proc.kill('SIGKILL'); };
	process.on('exit', reap);
	const tail = () => fs.readFileSync(log, 'utf8').split('\n').slice(-30).join('\n');
	const url = await poll('the controller\'s "api: listening on" line', () => {
		if (exited)
			fail(`perfgate-controller serve exited (${exited.code ?? exited.signal}) before listening:\n${tail()}`);
		const m = /api: listening on (http:\/\/127\.0\.0\.1:[1-9][0-9]*)/.exec(fs.readFileSync(log, 'utf8'));
		return m && m[1];
	});
	const ctlh = {
		url, origin: new URL(url).origin, config, log, proc,
		tail,
		async stop() {
			if (exited)
				fail(`perfgate-controller serve had exited already (${exited.code ?? exited.signal}):\n${tail()}`);
			proc.kill('SIGTERM');
			const e = await done;
			if (e.code !== 0)
				fail(`perfgate-controller serve exited ${e.code ?? 'on ' + e.signal} on SIGTERM:\n${tail()}`);
		},
		kill() {
			if (!exited)
				proc.kill('SIGKILL');
		},
	};
	return ctlh;
}

// ---- stores, trees, mails -------------------------------------------------------------

// loadFixture(dir): tests/browser/fixture/store.sql into dir/state/perfgate.db
// and the fixture's log files into dir/state (the logs table's paths are
// relative to data_dir).  Returns {db, dataDir}.
export function loadFixture(dir) {
	const dump = path.join(FIXTURE, 'store.sql');
	check(fs.existsSync(dump), `no fixture ${dump}: make it with scripts/web-fixture.sh (see its README)`);
	const dataDir = path.join(dir, 'state');
	fs.mkdirSync(dataDir, { recursive: true });
	const db = path.join(dataDir, 'perfgate.db');
	const fd = fs.openSync(dump, 'r');
	try {
		run(['sqlite3', '-bail', db], { stdio: [fd, 'pipe', 'pipe'] });
	} finally {
		fs.closeSync(fd);
	}
	if (fs.existsSync(path.join(FIXTURE, 'logs')))
		fs.cpSync(path.join(FIXTURE, 'logs'), path.join(dataDir, 'logs'), { recursive: true });
	for (const r of sql(db, 'SELECT path FROM logs'))
		check(!path.isAbsolute(r.path) && fs.existsSync(path.join(dataDir, r.path)),
		      `fixture: the log ${r.path} of the logs table is not in ${FIXTURE}/logs`);
	return { db, dataDir };
}

// demoTree(dir): dir/dpdk, a git tree at VERSION 22.11.0 on branch main,
// and dir/profiles/demo.json, the demo profile with its tree there (as
// tests/integration/lib.sh's demo_tree).  Returns the profiles directory.
export function demoTree(dir) {
	const env = { ...process.env, GIT_CONFIG_NOSYSTEM: '1', GIT_AUTHOR_NAME: 't',
		      GIT_AUTHOR_EMAIL: 't@example.org', GIT_COMMITTER_NAME: 't',
		      GIT_COMMITTER_EMAIL: 't@example.org' };
	const tree = path.join(dir, 'dpdk');
	run(['git', 'init', '-q', '-b', 'main', tree], { env });
	fs.writeFileSync(path.join(tree, 'VERSION'), '22.11.0\n');
	run(['git', '-C', tree, 'add', '.'], { env });
	run(['git', '-C', tree, 'commit', '-q', '-m', 'version 22.11'], { env });
	const profiles = path.join(dir, 'profiles');
	fs.mkdirSync(profiles, { recursive: true });
	const p = JSON.parse(fs.readFileSync(path.join(TOP, 'profiles/demo.json'), 'utf8'));
	p.trees['dpdk-demo'].url = tree;
	fs.writeFileSync(path.join(profiles, 'demo.json'), JSON.stringify(p, null, 2) + '\n');
	return profiles;
}

// The hostile text: markup that runs script if a page ever puts it in
// innerHTML, a quote to break out of an attribute, and controls: ESC [31m
// and BEL (intake makes C0 controls in headers spaces), a C1 CSI and a
// bidi override (kept by intake, escaped by the sanitiser).
export const HOSTILE_TEXT = '<script>window.__pwned=1</script> <img src=x onerror="window.__pwned=1"> ' +
	'"quoted" \x1b[31mred\x07 bell \u009b2J \u202ertl';
export const HOSTILE_MSGID = 'hostile.1@example.org';

// hostileMbox(file): one real patch mail (on the demo tree's VERSION)
// whose Subject holds HOSTILE_TEXT raw and whose From name holds it in an
// RFC 2047 encoded word.
export function hostileMbox(file) {
	const name = `Eve ${HOSTILE_TEXT}`;
	const mail = [
		'From hostile@example.org Mon Nov 30 05:00:00 2026',
		`Message-Id: <${HOSTILE_MSGID}>`,
		`From: =?UTF-8?B?${Buffer.from(name).toString('base64')}?= <eve@example.org>`,
		'Date: Mon, 30 Nov 2026 05:00:00 +0000',
		`Subject: [PATCH] net: ${HOSTILE_TEXT}`,
		'MIME-Version: 1.0',
		'Content-Type: text/plain; charset=UTF-8',
		'Content-Transfer-Encoding: 8bit',
		'',
		`The body says ${HOSTILE_TEXT} too.`,
		'',
		'Signed-off-by: Eve <eve@example.org>',
		'---',
		' VERSION | 2 +-',
		' 1 file changed, 1 insertion(+), 1 deletion(-)',
		'',
		'diff --git a/VERSION b/VERSION',
		'index 0000000..1111111 100644',
		'--- a/VERSION',
		'+++ b/VERSION',
		'@@ -1 +1 @@',
		'-22.11.0',
		'+22.11.1',
		'-- ',
		'2.39.5',
		'',
		'',
	].join('\n');
	fs.writeFileSync(file, mail);
}

// ---- the browser ------------------------------------------------------------------------

let playwright = null;
function pw() {
	if (!playwright) {
		// playwright-core lives in BUILD/browser/node_modules (npm ci by
		// run.sh), not next to this file.
		const req = createRequire(path.join(path.dirname(MODULES), 'package.json'));
		playwright = req('playwright-core');
	}
	return playwright;
}

// launch(): Debian's chromium, headless; its sandbox off only as root
// (chromium refuses to run sandboxed as root).
export async function launch() {
	const root = typeof process.getuid === 'function' && process.getuid() === 0;
	return pw().chromium.launch({ executablePath: CHROMIUM, headless: true, chromiumSandbox: !root });
}

// In every frame, before the page's scripts: report CSP violations to
// the harness (a binding; also on the console for the log).
const CSP_WATCH = `(() => {
	const doc = Math.random().toString(36).slice(2);
	let n = 0;
	const report = (e) => {
		const v = { id: doc + '.' + n++, directive: e.effectiveDirective || e.violatedDirective,
			    blocked: e.blockedURI, source: e.sourceFile, line: e.lineNumber, sample: e.sample,
			    disposition: e.disposition, document: e.documentURI };
		(window.__pgCspSeen = window.__pgCspSeen || []).push(v);
		try { window.__pgCspViolation(v); } catch (x) { /* checked at the end from __pgCspSeen */ }
	};
	document.addEventListener('securitypolicyviolation', report, true);
})();`;

// A page in its own browser context, watched.  opts.origin: the only
// origin requests may go to (null: none may leave the page, as for data:
// pages); opts.allowStatus: HTTP error statuses this page expects;
// opts.allowConsole: regexps of console errors this page expects.
export class Watched {
	constructor(harness, context, page, opts) {
		this.harness = harness;
		this.context = context;
		this.page = page;
		this.origin = opts.origin;
		this.allowStatus = new Set(opts.allowStatus || []);
		this.allowConsole = opts.allowConsole || [];
		this.problems = [];
		this.requests = [];
		this.cspIds = new Set();	// violations reported (never cleared)
		this.name = opts.name || 'page';
	}

	static async open(harness, opts) {
		const context = await harness.browser.newContext({ viewport: { width: 1280, height: 900 } });
		const page = await context.newPage();
		const w = new Watched(harness, context, page, opts);
		await context.exposeBinding('__pgCspViolation', (_src, v) => w.csp(v));
		await context.addInitScript(CSP_WATCH);
		context.on('request', (r) => {
			const u = r.url();
			w.requests.push({ url: u, method: r.method(), headers: r.headers() });
			if (/^(data|blob|about):/.test(u))
				return;
			let origin;
			try {
				origin = new URL(u).origin;
			} catch {
				origin = u;
			}
			if (origin !== w.origin)
				w.problem(`request to another origin than ${w.origin}: ${r.method()} ${u}`);
		});
		context.on('requestfailed', (r) =>
			w.problem(`request failed: ${r.method()} ${r.url()}: ${r.failure()?.errorText}`));
		context.on('response', (r) => {
			if (r.status() >= 400 && !w.allowStatus.has(r.status()))
				w.problem(`HTTP ${r.status()} for ${r.request().method()} ${r.url()}`);
		});
		page.on('console', (m) => {
			const text = m.text();
			const where = m.location()?.url || '';
			// The browser's own request for an icon the page does not
			// declare is not the page's.
			if (/^Failed to load resource/.test(text) && /\/favicon\.ico$/.test(where))
				return;
			if (m.type() === 'error' || /Content[- ]Security[- ]Policy/i.test(text)) {
				if (!w.allowConsole.some((re) => re.test(text)))
					w.problem(`console ${m.type()}: ${text}${where ? ' (' + where + ')' : ''}`);
			}
		});
		page.on('pageerror', (e) => w.problem(`page error: ${e.message}`));
		page.on('dialog', (d) => {
			w.problem(`a ${d.type()} dialog: ${JSON.stringify(d.message())}`);
			d.dismiss().catch(() => {});
		});
		page.on('popup', (p) => w.problem(`a popup opened: ${p.url()}`));
		return w;
	}

	problem(msg) {
		this.problems.push(msg);
	}

	csp(v) {
		if (this.cspIds.has(v.id))
			return;
		this.cspIds.add(v.id);
		this.problem(`CSP violation: ${v.directive} blocked ${v.blocked || '(inline)'} at ` +
			     `${v.source || v.document}:${v.line}${v.sample ? ' sample ' + JSON.stringify(v.sample) : ''}`);
	}

	// The problems so far, cleared (for tests of the watch itself).
	take() {
		const p = this.problems;
		this.problems = [];
		return p;
	}

	url(p) {
		return p.startsWith('/') ? this.origin + p : p;
	}

	// goto(path): navigate; fail unless the document's status is want.
	async goto(p, want = 200) {
		const r = await this.page.goto(this.url(p), { waitUntil: 'load', timeout: DEADLINE_MS });
		check(r, `goto ${p}: no response`);
		eq(r.status(), want, `HTTP status of ${p}`);
		return r;
	}

	// ready(): wait until the page says it has rendered its data
	// (document.body.dataset.ready === "1"); fail with what #error shows.
	async ready(what = this.page.url()) {
		try {
			await this.page.waitForFunction(() => document.body && document.body.dataset.ready === '1',
							null, { timeout: DEADLINE_MS, polling: 100 });
		} catch (e) {
			let err = '';
			try {
				err = await this.page.evaluate(() => document.querySelector('#error')?.textContent || '');
			} catch { /* the page is gone */ }
			fail(`${what}: data-ready never became "1" (${e.message.split('\n')[0]})` +
			     (err ? `; #error says ${JSON.stringify(err)}` : '') +
			     (this.problems.length ? `; problems so far:\n  ${this.problems.join('\n  ')}` : ''));
		}
	}

	async open(p, want = 200) {
		await this.goto(p, want);
		await this.ready(p);
	}

	async screenshot(name) {
		fs.mkdirSync(SCREENSHOTS, { recursive: true });
		const file = path.join(SCREENSHOTS, `${name}.png`);
		await this.page.screenshot({ path: file, fullPage: true });
		return file;
	}

	// The CSP violations the current document recorded in itself whose
	// report through the binding has not arrived (yet): counted now.
	async flush() {
		let seen = [];
		try {
			seen = await this.page.evaluate(() => window.__pgCspSeen || []);
		} catch { /* the page is gone: what was reported is all there is */ }
		for (const v of seen)
			this.csp(v);
	}

	async close() {
		await this.context.close();
	}
}

// What runner.mjs gives each test: the browser, the origin its pages may
// talk to, scratch state from before(), and watched pages that are
// checked and closed when the test ends.
export class Harness {
	constructor(browser) {
		this.browser = browser;
		this.origin = null;
		this.pages = [];
		this.cleanups = [];
	}

	async page(opts = {}) {
		const w = await Watched.open(this, { origin: this.origin, ...opts });
		this.pages.push(w);
		return w;
	}

	onCleanup(fn) {
		this.cleanups.push(fn);
	}

	// After each test: every problem of every page it opened.
	async endTest() {
		const problems = [];
		for (const w of this.pages) {
			await w.flush();
			problems.push(...w.problems.map((p) => `${w.name}: ${p}`));
			await w.close().catch(() => {});
		}
		this.pages = [];
		return problems;
	}
}
