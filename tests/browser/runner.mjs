// SPDX-License-Identifier: MIT
// Run one browser test file: node runner.mjs FILE (through run.sh).
//
// A test file exports async functions; each is a test, run in the order
// they appear in the file, with a Harness (lib.mjs).  Two names are not
// tests: before(h) runs first (a failure there fails every test of the
// file) and after(h) runs last, whatever happened.  A test fails when it
// throws or when a page it opened saw a problem (console error, page
// error, CSP violation, HTTP error, request to another origin).  Prints
// "ok   FILE.NAME (Ns)" or "FAIL FILE.NAME (Ns)" with the reason indented,
// and "tests: PASSED FAILED" last; exits 1 when a test failed.
import fs from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';

import { Harness, launch } from './lib.mjs';

const file = process.argv[2];
if (!file) {
	console.error('usage: node runner.mjs TEST_FILE');
	process.exit(2);
}
const base = path.basename(file, '.mjs');
const mod = await import(pathToFileURL(path.resolve(file)).href);

// The tests in source order (a module namespace lists its exports sorted
// by name).
const src = fs.readFileSync(file, 'utf8');
const names = [...src.matchAll(/^export\s+async\s+function\s+([A-Za-z_$][\w$]*)/gm)]
	.map((m) => m[1]).filter((n) => n !== 'before' && n !== 'after');
for (const n of Object.keys(mod))
	if (typeof mod[n] === 'function' && n !== 'before' && n !== 'after' && !names.includes(n))
		names.push(n);

const indent = (s) => String(s).split('\n').map((l) => '    ' + l).join('\n');
const secs = (t0) => Math.round((Date.now() - t0) / 1000);
const reason = (e) => (e && e.name === 'TestFailure' ? e.message : (e && e.stack) || String(e));

let passed = 0, failed = 0;
let browser = null;
let h = null;
let setupError = null;
try {
	browser = await launch();
	h = new Harness(browser);
	if (typeof mod.before === 'function')
		await mod.before(h);
} catch (e) {
	setupError = e;
}
if (setupError) {
	// Whatever the page checks saw while setting up helps too.
	const extra = h ? await h.endTest() : [];
	for (const n of names) {
		failed++;
		console.log(`FAIL ${base}.${n} (set-up failed)`);
	}
	console.log(indent(`before: ${reason(setupError)}${extra.length ? '\n' + extra.join('\n') : ''}`));
} else {
	for (const n of names) {
		const t0 = Date.now();
		let err = null;
		try {
			await mod[n](h);
		} catch (e) {
			err = e;
		}
		let problems = [];
		try {
			problems = await h.endTest();
		} catch (e) {
			problems = [`closing the pages: ${reason(e)}`];
		}
		if (!err && problems.length === 0) {
			passed++;
			console.log(`ok   ${base}.${n} (${secs(t0)}s)`);
		} else {
			failed++;
			console.log(`FAIL ${base}.${n} (${secs(t0)}s)`);
			if (err)
				console.log(indent(reason(err)));
			if (problems.length)
				console.log(indent('the pages saw:\n' + problems.map((p) => '  ' + p).join('\n')));
		}
	}
}
if (h) {
	try {
		if (typeof mod.after === 'function')
			await mod.after(h);
	} catch (e) {
		failed++;
		console.log(`FAIL ${base}.after`);
		console.log(indent(reason(e)));
	}
	for (const fn of h.cleanups.reverse()) {
		try {
			await fn();
		} catch (e) {
			console.log(indent(`cleanup: ${reason(e)}`));
		}
	}
}
if (browser)
	await browser.close().catch(() => {});
console.log(`tests: ${passed} ${failed}`);
process.exit(failed ? 1 : 0);
