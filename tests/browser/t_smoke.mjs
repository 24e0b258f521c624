// SPDX-License-Identifier: MIT
// The harness itself, without the dashboard: chromium starts and renders
// pages under the dashboard's Content-Security-Policy (served by a small
// server here, with the contract's headers), and the watch catches what
// it must -- a CSP violation (inline script, style attribute, image and
// fetch elsewhere), a console error, an uncaught exception, a request to
// another origin, an HTTP error -- and reports a problem as a failure of
// the test that saw it.  Then a real `perfgate-controller serve` started
// and stopped the way the dashboard tests do it, on a store holding the
// hostile series, and the JS sanitiser against the controller's.
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';

import {
	HOSTILE_TEXT, check, ctl, eq, fail, hexText, hostileMbox, poll, sanitize, sql, sqlOne,
	startController,
} from './lib.mjs';

// The contract's headers (web/CONTRACT.md).
const CSP = "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; " +
	"connect-src 'self'; font-src 'self'; object-src 'none'; base-uri 'none'; " +
	"form-action 'self'; frame-ancestors 'none'";

function listen(handler) {
	return new Promise((resolve, reject) => {
		const srv = http.createServer(handler);
		srv.on('error', reject);
		srv.listen(0, '127.0.0.1', () => {
			const origin = `http://127.0.0.1:${srv.address().port}`;
			resolve({ srv, origin, close: () => new Promise((r) => srv.close(r)) });
		});
	});
}

let elsewhere = null;		// another origin
let elsewhereHits = [];		// what it was asked for
const PIXEL = Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR4nGNgYPj/HwADAgH/' +
			  'pWXdKQAAAABJRU5ErkJggg==', 'base64');

function site(req, res) {
	const html = (body, csp = true) => {
		const h = { 'Content-Type': 'text/html; charset=utf-8', 'X-Content-Type-Options': 'nosniff',
			    'Referrer-Policy': 'same-origin' };
		if (csp)
			h['Content-Security-Policy'] = CSP;
		res.writeHead(200, h);
		res.end(`<!doctype html><html lang="en"><head><meta charset="utf-8"><title>smoke</title>` +
			`<link rel="stylesheet" href="/assets/smoke.css"></head><body>${body}</body></html>`);
	};
	const js = (text) => {
		res.writeHead(200, { 'Content-Type': 'text/javascript; charset=utf-8', 'Content-Security-Policy': CSP });
		res.end(text);
	};
	switch (req.url) {
	case '/good':
		return html('<nav><a href="/">list</a></nav><main><h1 id="title"></h1></main>' +
			    '<script type="module" src="/assets/good.js"></script>');
	case '/assets/good.js':
		return js(`const r = await fetch('/data.json');
const d = await r.json();
document.getElementById('title').textContent = d.title;
document.getElementById('title').style.color = '#a00';	// CSSOM: allowed
document.body.dataset.ready = '1';`);
	case '/data.json':
		res.writeHead(200, { 'Content-Type': 'application/json' });
		return res.end(JSON.stringify({ title: HOSTILE_TEXT }));
	case '/assets/smoke.css':
		res.writeHead(200, { 'Content-Type': 'text/css' });
		return res.end('body { font-family: sans-serif; } h1 { font-size: 1.2em; }');
	case '/bad':
		return html('<main><p style="color: red">inline style</p>' +
			    '<script>window.__inline = 1;</script>' +
			    `<img alt="" src="${elsewhere.origin}/pixel.png"></main>` +
			    '<script type="module" src="/assets/bad.js"></script>');
	case '/assets/bad.js':
		return js(`console.error('smoke: an error on the console');
fetch('${elsewhere.origin}/data.json').catch(() => {});
document.body.dataset.ready = '1';
setTimeout(() => { throw new Error('smoke: thrown, never caught'); }, 0);`);
	case '/nocsp':
		return html(`<main><img alt="" src="${elsewhere.origin}/pixel.png"></main>` +
			    '<script type="module" src="/assets/ready.js"></script>' +
			    '<script type="module" src="/assets/missing.js"></script>', false);
	case '/assets/ready.js':
		return js("document.body.dataset.ready = '1';");
	default:
		res.writeHead(404, { 'Content-Type': 'text/plain' });
		return res.end('not found\n');
	}
}

export async function before(h) {
	elsewhere = await listen((req, res) => {
		elsewhereHits.push(req.url);
		res.writeHead(200, { 'Content-Type': 'image/png', 'Access-Control-Allow-Origin': '*' });
		res.end(PIXEL);
	});
	const s = await listen(site);
	h.origin = s.origin;
	h.onCleanup(() => s.close());
	h.onCleanup(() => elsewhere.close());
	h.scratch = fs.mkdtempSync(path.join(os.tmpdir(), 'pg-browser-smoke.'));
	h.onCleanup(() => fs.rmSync(h.scratch, { recursive: true, force: true }));
}

// problemsOf(w, patterns): wait until the watch has seen a problem
// matching each pattern (CSP reports arrive asynchronously), then take
// them all.
async function problemsOf(w, patterns) {
	await poll(`problems matching ${patterns.join(', ')} (seen: ${JSON.stringify(w.problems)})`,
		   () => patterns.every((re) => w.problems.some((p) => re.test(p))));
	return w.take();
}

export async function renders_a_page_under_the_csp(h) {
	const w = await h.page({ name: 'good' });
	await w.open('/good');
	eq(await w.page.textContent('h1#title'), HOSTILE_TEXT, 'the title rendered with textContent');
	eq(await w.page.evaluate(() => typeof window.__pwned), 'undefined', 'window.__pwned');
	eq(await w.page.evaluate(() => document.querySelectorAll('img, main script').length), 0,
	   'elements made from the data');
	const file = await w.screenshot('smoke-good');
	check(fs.statSync(file).size > 1000, `${file} is too small to be a screenshot`);
	eq(w.take(), [], 'problems of a clean page');
}

export async function renders_a_data_page(h) {
	const w = await h.page({ name: 'data', origin: null });
	await w.page.goto('data:text/html;charset=utf-8,' +
			  encodeURIComponent('<!doctype html><h1>data page</h1><p>rendered</p>'));
	eq(await w.page.textContent('h1'), 'data page', 'the heading of a data: page');
	await w.screenshot('smoke-data');
	eq(w.take(), [], 'problems of a data: page that requests nothing');
}

export async function catches_csp_violations_and_errors(h) {
	const w = await h.page({ name: 'bad' });
	elsewhereHits = [];
	await w.open('/bad');
	await problemsOf(w, [
		/^CSP violation: script-src-elem blocked inline/,
		/^CSP violation: style-src-attr blocked inline/,
		/^CSP violation: img-src blocked http:\/\/127\.0\.0\.1:\d+\/pixel\.png/,
		/^CSP violation: connect-src blocked http:\/\/127\.0\.0\.1:\d+\/data\.json/,
		/^console error: smoke: an error on the console \(http:\/\/127\.0\.0\.1:\d+\/assets\/bad\.js\)$/,
		/^page error: smoke: thrown, never caught$/,
	]);
	eq(await w.page.evaluate(() => typeof window.__inline), 'undefined',
	   'window.__inline (an inline script ran despite the CSP)');
	// Blocked by the CSP (the watch still reports them as requests to
	// another origin): nothing reached the other server.
	eq(elsewhereHits, [], 'requests the other origin received from a page under the CSP');
}

export async function catches_other_origins_and_http_errors(h) {
	const w = await h.page({ name: 'nocsp' });
	elsewhereHits = [];
	await w.open('/nocsp');
	await problemsOf(w, [
		/^request to another origin than http:\/\/127\.0\.0\.1:\d+: GET http:\/\/127\.0\.0\.1:\d+\/pixel\.png$/,
		/^HTTP 404 for GET http:\/\/127\.0\.0\.1:\d+\/assets\/missing\.js$/,
	]);
	eq(elsewhereHits, ['/pixel.png'], 'what the other origin received from a page without a CSP');
	const d = await h.page({ name: 'data-img', origin: null });
	await d.page.goto('data:text/html,' + encodeURIComponent(`<img src="${elsewhere.origin}/pixel.png">`));
	await problemsOf(d, [/^request to another origin than null: GET http:\/\/127\.0\.0\.1:\d+\/pixel\.png$/]);
}

export async function a_problem_fails_the_test(h) {
	// What the runner does after each test, here by hand: a page with a
	// problem left in it makes endTest() report it under the page's name.
	const w = await h.page({ name: 'left-bad' });
	await w.open('/bad');
	await poll('a problem on /bad', () => w.problems.length > 0);
	const got = await h.endTest();
	check(got.length > 0 && got.every((p) => p.startsWith('left-bad: ')),
	      `endTest() gave ${JSON.stringify(got)}`);
	check(got.some((p) => /CSP violation/.test(p)), `no CSP violation in ${JSON.stringify(got)}`);
}

export async function sanitize_is_the_controllers(h) {
	// The vector of tests/integration/t_api.sh (a log: the block mode).
	const raw = Buffer.concat([Buffer.from('ok \u00e9 \x1b[2J\x07 lone\rcr '), Buffer.from([0xc2, 0x9b]),
				   Buffer.from(' \u202ertl '), Buffer.from([0xff]), Buffer.from(' crlf\r\nend\n')]);
	eq(sanitize(raw, 'block'), 'ok \u00e9 \\x1b[2J\\x07 lone\\x0dcr \\u009b \\u202ertl \ufffd crlf\r\nend\n',
	   'sanitize(block) of t_api.sh\'s hostile log');
	eq(sanitize('a\tb\r\nc\u2028\x7f', 'line'), 'a\\x09b\\x0d\\x0ac\\u2028\\x7f', 'sanitize(line)');
	eq(sanitize(Buffer.from([0x61, 0xc0, 0xaf, 0xed, 0xa0, 0x80, 0x62])), 'a\ufffd\ufffd\ufffd\ufffd\ufffdb',
	   'sanitize of an overlong form and a surrogate');
}

export async function starts_and_stops_the_controller(h) {
	const dir = fs.mkdtempSync(path.join(h.scratch, 'ctl.'));
	const dataDir = path.join(dir, 'state');
	const db = path.join(dataDir, 'perfgate.db');
	const cfg = path.join(dir, 'cli.json');
	fs.writeFileSync(cfg, JSON.stringify({ db, data_dir: dataDir,
		profiles_dir: path.join(process.env.PG_TOP, 'profiles'), profiles: ['demo.json'] }));
	ctl(cfg, 'db', 'migrate');
	const mbox = path.join(dir, 'hostile.mbox');
	hostileMbox(mbox);
	const out = ctl(cfg, 'ingest', '--mbox', mbox);
	check(/^series completed: +1$/m.test(out), `ingest of the hostile mail:\n${out}`);
	const title = hexText(sqlOne(db, 'SELECT hex(title) FROM series'));
	check(title.includes('<script>window.__pwned=1</script>') && title.includes('\u202e'),
	      `the stored title ${JSON.stringify(title)} lost its hostile parts`);
	// The controller's own sanitiser, in its listing, is the JS one.
	const list = ctl(cfg, 'series', 'list');
	check(list.includes(sanitize(title, 'line')),
	      `series list does not show ${JSON.stringify(sanitize(title, 'line'))}:\n${list}`);

	// web_dir left out: this starts and stops the daemon, the pages are
	// t_dashboard's.
	const c = await startController({ dir, db, dataDir, webDir: null, adminToken: 'smoke-admin-token-0123456789' });
	h.onCleanup(() => c.kill());
	const w = await h.page({ name: 'api', origin: c.origin });
	const r = await w.goto('/api/v1/series');
	const body = await r.json();
	eq(body.total, sqlOne(db, 'SELECT count(*) FROM series'), '/api/v1/series total');
	eq(body.series.map((s) => s.title), sql(db, 'SELECT hex(title) AS h FROM series ORDER BY id').map((x) => hexText(x.h)),
	   'the titles of /api/v1/series (JSON decodes to the stored text)');
	await c.stop();
	check(/api: listening on http:\/\/127\.0\.0\.1:\d+/.test(fs.readFileSync(c.log, 'utf8')), 'no listening line');
	if (!/api: stopped/.test(fs.readFileSync(c.log, 'utf8')))
		fail(`the controller's log does not say the API stopped:\n${c.tail()}`);
}
