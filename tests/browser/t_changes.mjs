// SPDX-License-Identifier: MIT
// Baselines on the dashboard: the change points page, the main-branch
// regression banner of every page, and each agent's own noise and drift
// on the agents page.  The store is the fixture's (tests/browser/fixture/),
// migrated, plus what the controller's baselines and bisection would have
// stored, written here with SQL: one baseline run of both build modes on
// the fixture's agent (so that /api/v1/hosts/e2e-1/noise has keys), an
// agent without baselines, and a change point in each state, one of them
// with hostile text (markup, a script, control and bidi bytes, a branch
// name longer than the controller keeps).  Every page is compared with
// what the API answers, and the banner is followed as the store changes
// under the running controller.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

import { check, ctl, eq, fail, loadFixture, run, sanitize, sql, sqlOne, startController } from './lib.mjs';

const S = {};
const NOW = Math.floor(Date.now() / 1000);
const CONTEXT = 'perfgate-demo-Performance';
const PAGES = ['/', '/trends', '/changes', '/agents', '/queue'];
// What the pages must never show of a text: the code points
// lib/sanitize.c escapes.
const UNSAFE = /[\u0000-\u001f\u007f-\u009f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]/;

const q = (query) => sql(S.db, query);
// A write beside the running controller: wait for its writer.
const write = (query) => run(['sqlite3', '-bail', '-cmd', '.timeout 20000', S.db, query]);
const oid = (n) => n.toString(16).padStart(2, '0').repeat(20);

export async function before(h) {
	const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'pg-browser-changes.'));
	h.onCleanup(() => fs.rmSync(dir, { recursive: true, force: true }));
	const { db, dataDir } = loadFixture(dir);
	S.db = db;
	const cli = path.join(dir, 'cli.json');
	fs.writeFileSync(cli, JSON.stringify({ db, data_dir: dataDir, profiles_dir: path.join(process.env.PG_TOP, 'profiles'),
					       profiles: ['demo.json'] }));
	ctl(cli, 'db', 'migrate');
	ctl(cli, 'agent', 'add', 'lab-quiet');

	// A baseline of main on e2e-1, both build modes: the fixture's jobs'
	// base samples as both sides, the patched side off by -0.4..+0.4 %
	// (what one build against itself gives on a quiet host).
	const jobs = q(`SELECT id, build_mode FROM jobs WHERE state = 'done' AND outcome = 'ok' ORDER BY id`);
	check(jobs.length >= 2, `the fixture has ${jobs.length} done jobs, expected the two build modes of its run`);
	const commit = sqlOne(db, `SELECT base_commit FROM runs WHERE series_id IS NOT NULL ORDER BY id LIMIT 1`);
	const stmts = [`INSERT INTO runs (series_id, reason, tree, branch, base_commit, state, created_at, finished_at, trigger)
			VALUES (NULL, 'baseline', 'dpdk-demo', 'main', '${commit}', 'done', ${NOW - 4000}, ${NOW - 3000}, 'manual');`];
	for (const j of jobs.slice(0, 2))
		stmts.push(`INSERT INTO jobs (run_id, context, host_class, build_mode, spec, priority, state, attempt, agent_id,
				outcome, outcome_detail, created_at, started_at, finished_at)
			SELECT (SELECT max(id) FROM runs), context, host_class, build_mode, spec, 0, 'done', 1, agent_id, 'ok',
				'baseline', ${NOW - 4000}, ${NOW - 3900}, ${NOW - 3000} FROM jobs WHERE id = ${j.id};
			INSERT INTO attempts (job_id, attempt, agent_id, started_at, ended_at, outcome)
			SELECT max(id), 1, (SELECT agent_id FROM jobs WHERE id = ${j.id}), ${NOW - 3900}, ${NOW - 3000}, 'ok' FROM jobs;
			INSERT INTO results (job_id, attempt, outcome, detail, fingerprint, digest, received_at)
			SELECT max(id), 1, 'ok', 'baseline', '{}', 'browser-test', ${NOW - 3000} FROM jobs;
			INSERT INTO samples (job_id, attempt, side, benchmark, metric, repetition, value, unit)
			SELECT (SELECT max(id) FROM jobs), 1, 'base', benchmark, metric, repetition, value, unit
			FROM samples WHERE job_id = ${j.id} AND attempt = 1 AND side = 'base';
			INSERT INTO samples (job_id, attempt, side, benchmark, metric, repetition, value, unit)
			SELECT (SELECT max(id) FROM jobs), 1, 'patched', benchmark, metric, repetition,
				value * (1 + 0.002 * (length(metric) % 5 + 1) * ((repetition % 3) - 1)), unit
			FROM samples WHERE job_id = ${j.id} AND attempt = 1 AND side = 'base';`);
	run(['sqlite3', '-bail', db, stmts.join('\n')]);
	S.baselineRun = sqlOne(db, `SELECT max(id) FROM runs WHERE reason = 'baseline'`);

	// The change points, one key of the history each (its trend exists).
	const keys = q(`SELECT DISTINCT host, tree, branch, build_mode, benchmark, metric FROM history
			ORDER BY build_mode, benchmark, metric LIMIT 4`);
	check(keys.length >= 3, `the fixture's history has ${keys.length} keys, expected 3 or more`);
	const lit = (s) => `'${String(s).replace(/'/g, "''")}'`;
	const key = (k) => [k.host, k.tree, k.branch, k.build_mode, k.benchmark, k.metric].map(lit).join(', ');
	// Markup, a script, ESC, BEL, DEL, a C1 CSI, RLO and a line separator.
	const hostile = `'<script>window.__pwned=1</script><img src=x onerror="window.__pwned=1"> ' || char(27) || '[2J' ||
		char(7) || char(127) || char(155) || ' ' || char(8238) || 'evil' || char(8232) || 'end'`;
	const cps = [
		// located: a regression (the banner's)
		`INSERT INTO change_points (host, tree, branch, build_mode, benchmark, metric, commit_before, commit_after,
			effect, p, state, detected_at, context, first_before, first_after, located_commit, bisect_runs, why,
			updated_at, alerted_at)
		 VALUES (${key(keys[0])}, '${oid(0x1a)}', '${oid(0x1b)}', -8.1, 0.004, 'confirmed', ${NOW - 7200}, '${CONTEXT}',
			'${oid(0x10)}', '${oid(0x1f)}', '${oid(0x1b)}', 3, 'located at one commit after 3 baselines',
			${NOW - 600}, ${NOW - 600});`,
		// waiting for its bisection's baseline
		`INSERT INTO change_points (host, tree, branch, build_mode, benchmark, metric, commit_before, commit_after,
			effect, p, state, detected_at, context, first_before, first_after, bisect_runs, bisect_run_id, updated_at)
		 VALUES (${key(keys[1])}, '${oid(0x2a)}', '${oid(0x2f)}', -12.25, 0.0123, 'suspected', ${NOW - 3600}, '${CONTEXT}',
			'${oid(0x2a)}', '${oid(0x2f)}', 1, ${S.baselineRun}, ${NOW - 300});`,
		// dismissed, with hostile text and a branch longer than kept
		`INSERT INTO change_points (host, tree, branch, build_mode, benchmark, metric, commit_before, commit_after,
			effect, p, state, detected_at, context, first_before, first_after, bisect_runs, why, updated_at)
		 VALUES (${lit(keys[2].host)}, ${lit(keys[2].tree)},
			'main-<b>x</b>' || char(9) || char(8238) || replace(hex(zeroblob(200)), '00', 'yz'),
			${[keys[2].build_mode, keys[2].benchmark, keys[2].metric].map(lit).join(', ')},
			'${oid(0x3a)}', '${oid(0x3f)}', -3.5, NULL, 'dismissed', ${NOW - 1800}, '${CONTEXT}',
			'${oid(0x3a)}', '${oid(0x3f)}', 16, ${hostile}, ${NOW - 200});`,
		// located: an improvement (no banner)
		`INSERT INTO change_points (host, tree, branch, build_mode, benchmark, metric, commit_before, commit_after,
			effect, p, state, detected_at, context, first_before, first_after, located_commit, bisect_runs, why,
			updated_at, alerted_at)
		 VALUES (${key(keys[0])}, '${oid(0x4a)}', '${oid(0x4b)}', 6.5, 0.002, 'confirmed', ${NOW - 900}, '${CONTEXT}',
			'${oid(0x4a)}', '${oid(0x4b)}', '${oid(0x4b)}', 0, 'located', ${NOW - 100}, ${NOW - 100});`,
	];
	run(['sqlite3', '-bail', db, cps.join('\n')]);
	S.cp = Object.fromEntries(q(`SELECT id, state, effect FROM change_points ORDER BY id`)
		.map((r, i) => [['regression', 'suspected', 'hostile', 'improvement'][i], r.id]));

	const c = await startController({ dir, db, dataDir });
	h.onCleanup(() => c.kill());
	h.origin = c.origin;
	S.ctl = c;
}

export async function after(h) {
	if (S.ctl)
		await S.ctl.stop();
}

async function api(p) {
	const r = await fetch(S.ctl.origin + p);
	eq(r.status, 200, `GET ${p}`);
	return r.json();
}

// The frame every page shares, the banner, and nothing run from the data.
async function frame(w, where) {
	const d = await w.page.evaluate(() => ({
		nav: ['/', '/trends', '/changes', '/agents', '/queue'].map((href) => !!document.querySelector(`nav a[href="${href}"]`)),
		pwned: typeof window.__pwned,
		scripts: [...document.scripts].filter((s) => !s.src || !s.src.includes('/assets/')).length,
		images: [...document.images].filter((i) => !(i.getAttribute('src') || '').startsWith('data:')).length,
		handlers: [...document.querySelectorAll('*')].filter((el) => [...el.attributes].some((a) => /^on/i.test(a.name))).length,
		alerts: document.body.dataset.alerts ?? null,
		banner: (() => {
			const b = document.querySelector('#change-alert');
			return b && { count: b.dataset.count, cp: b.dataset.cp ?? null, text: b.textContent,
				      href: b.querySelector('a')?.getAttribute('href') ?? null,
				      afterHeader: b.previousElementSibling?.matches('header.site') ?? false };
		})(),
	}));
	eq(d.nav, [true, true, true, true, true], `${where}: nav links to /, /trends, /changes, /agents, /queue`);
	eq(d.pwned, 'undefined', `${where}: typeof window.__pwned`);
	eq(d.scripts, 0, `${where}: scripts not from /assets/`);
	eq(d.images, 0, `${where}: images the data made`);
	eq(d.handlers, 0, `${where}: elements with inline event handlers`);
	return d;
}

const pct = (v) => { const r = v.toFixed(1); return +r === 0 ? '0.0%' : (v > 0 ? '+' : '') + r + '%'; };
const regressions = (cps) => cps.filter((c) => c.state === 'confirmed' && c.effect_pct < 0);

// The banner every page must show for the API's change points.
async function expectBanner(w, where) {
	const cps = (await api('/api/v1/change-points?state=confirmed&limit=1000')).change_points;
	const regs = regressions(cps);
	const d = await frame(w, where);
	eq(d.alerts, String(regs.length), `${where}: body[data-alerts] (located regressions)`);
	if (!regs.length) {
		eq(d.banner, null, `${where}: #change-alert without a located regression`);
		return regs;
	}
	check(d.banner, `${where}: no #change-alert for ${regs.length} located regression(s)`);
	check(d.banner.afterHeader, `${where}: #change-alert is not right under the header`);
	eq(d.banner.count, String(regs.length), `${where}: #change-alert data-count`);
	if (regs.length === 1) {
		const c = regs[0];
		const want = sanitize(`main-branch regression: ${c.tree}/${c.branch} ${c.benchmark}/${c.metric} ` +
				      `${pct(c.effect_pct)} at ${(c.located_commit || c.commit_after).slice(0, 12)} on ${c.host} (${c.build_mode})`);
		check(d.banner.text.startsWith(want), `${where}: #change-alert says ${JSON.stringify(d.banner.text)}, not ${JSON.stringify(want)}`);
		eq(d.banner.cp, String(c.id), `${where}: #change-alert data-cp`);
		eq(d.banner.href, `/changes?state=confirmed#cp-${c.id}`, `${where}: the banner's link`);
	} else {
		check(d.banner.text.startsWith(`${regs.length} main-branch regressions`),
		      `${where}: #change-alert says ${JSON.stringify(d.banner.text)}`);
		eq(d.banner.href, '/changes?state=confirmed', `${where}: the banner's link`);
	}
	check(!UNSAFE.test(d.banner.text), `${where}: a control or bidi character in #change-alert: ${JSON.stringify(d.banner.text)}`);
	return regs;
}

// table#changes as the page shows it.
function changesDom(w) {
	return w.page.evaluate(() => ({
		state: document.querySelector('form#filters select[name=state]')?.value ?? null,
		empty: document.querySelector('table#changes td.none')?.textContent ?? null,
		text: document.querySelector('table#changes')?.textContent ?? '',
		rows: [...document.querySelectorAll('table#changes tr[data-cp]')].map((tr) => {
			const f = (n) => tr.querySelector(`[data-field="${n}"]`);
			const a = tr.querySelector('[data-field=key] a.trend-link');
			return {
				id: Number(tr.dataset.cp), rowId: tr.id, state: tr.dataset.state, regression: tr.classList.contains('regression'),
				stateCell: f('state')?.textContent.trim() ?? null,
				branch: f('branch')?.textContent ?? null, host: f('host')?.textContent ?? null,
				buildMode: f('build_mode')?.textContent ?? null,
				key: a?.textContent ?? null, href: a?.getAttribute('href') ?? null,
				effect: f('effect')?.dataset.value ?? null, effectText: f('effect')?.textContent ?? null,
				p: f('p')?.dataset.value ?? null,
				before: f('range')?.dataset.before ?? null, after: f('range')?.dataset.after ?? null,
				located: f('range')?.dataset.located ?? null, range: f('range')?.textContent ?? null,
				bisect: f('bisect_runs')?.dataset.value ?? null, bisectText: f('bisect_runs')?.textContent ?? null,
				why: f('why')?.textContent ?? null,
				detected: f('detected')?.dataset.value ?? null, updated: f('updated')?.dataset.value ?? null,
			};
		}),
	}));
}

function compareChanges(d, cps, where) {
	eq(d.rows.map((r) => r.id), cps.map((c) => c.id), `${where}: table#changes tr[data-cp] (the API's order, newest first)`);
	for (const c of cps) {
		const r = d.rows.find((x) => x.id === c.id);
		const what = `${where} change point ${c.id}`;
		eq(r.rowId, `cp-${c.id}`, `${what}: tr id`);
		eq(r.state, c.state, `${what}: data-state`);
		eq(r.stateCell, c.state, `${what}: [data-field=state] text`);
		eq(r.regression, c.state === 'confirmed' && c.effect_pct < 0, `${what}: tr.regression`);
		eq(r.branch, sanitize(`${c.tree}/${c.branch}`), `${what}: [data-field=branch]`);
		eq(r.host, sanitize(c.host), `${what}: [data-field=host]`);
		eq(r.buildMode, sanitize(c.build_mode), `${what}: [data-field=build_mode]`);
		eq(r.key, sanitize(`${c.benchmark}/${c.metric}`), `${what}: [data-field=key] link text`);
		const trend = new URLSearchParams({ host: c.host, tree: c.tree, branch: c.branch, build_mode: c.build_mode,
						    benchmark: c.benchmark, metric: c.metric });
		eq(r.href, `/trends?${trend}`, `${what}: the key's link to its trend`);
		eq(r.effect, String(c.effect_pct), `${what}: [data-field=effect] data-value`);
		check(r.effectText.includes(pct(c.effect_pct)), `${what}: effect shown as ${JSON.stringify(r.effectText)}, not ${pct(c.effect_pct)}`);
		eq(r.p, c.p === null ? '' : String(c.p), `${what}: [data-field=p] data-value`);
		eq(r.before, c.commit_before, `${what}: range data-before`);
		eq(r.after, c.commit_after, `${what}: range data-after`);
		eq(r.located, c.located_commit ?? '', `${what}: range data-located`);
		if (c.located_commit)
			check(r.range.startsWith(`at ${c.located_commit.slice(0, 12)}`), `${what}: range text ${JSON.stringify(r.range)} for a located commit`);
		else
			check(r.range.startsWith(`${c.commit_before.slice(0, 12)}..${c.commit_after.slice(0, 12)}`),
			      `${what}: range text ${JSON.stringify(r.range)}`);
		eq(r.bisect, String(c.bisect_runs), `${what}: [data-field=bisect_runs] data-value`);
		if (c.bisect_run)
			check(r.bisectText.includes(`run ${c.bisect_run}`), `${what}: the waiting bisection run is not shown: ${JSON.stringify(r.bisectText)}`);
		eq(r.why, c.why ? sanitize(c.why) : '—', `${what}: [data-field=why]`);
		eq(r.detected, String(c.detected_at), `${what}: [data-field=detected] data-value`);
		eq(r.updated, String(c.updated_at), `${what}: [data-field=updated] data-value`);
	}
	check(!UNSAFE.test(d.text), `${where}: a control or bidi character in table#changes`);
}

export async function changes_page_matches_the_api(h) {
	const all = (await api('/api/v1/change-points?limit=1000')).change_points;
	eq(all.map((c) => c.state).sort(), ['confirmed', 'confirmed', 'dismissed', 'suspected'], 'the change points the API gives');
	const hostile = all.find((c) => c.id === S.cp.hostile);
	check(hostile.why.includes('<script>') && hostile.why.includes('\u001b') && hostile.why.includes('\u202e'),
	      `the API's hostile why lost its hostile parts: ${JSON.stringify(hostile.why)}`);
	check(hostile.branch.length > 200 && hostile.branch.includes('\t'), `the API's hostile branch: ${JSON.stringify(hostile.branch)}`);
	const w = await h.page({ name: 'changes' });
	await w.open('/changes');
	await frame(w, '/changes');
	const d = await changesDom(w);
	eq(d.state, '', '/changes: select[name=state] (all)');
	compareChanges(d, all, '/changes');
	// The hostile text is text: shown escaped, and no element made of it.
	const r = d.rows.find((x) => x.id === S.cp.hostile);
	check(r.why.includes('<script>window.__pwned=1</script>') && r.why.includes('\\x1b[2J\\x07\\x7f\\u009b \\u202eevil\\u2028end'),
	      `the hostile why is not shown escaped: ${JSON.stringify(r.why)}`);
	check(r.branch.includes('main-<b>x</b>\\x09\\u202e'), `the hostile branch is not shown escaped: ${JSON.stringify(r.branch)}`);
	eq(await w.page.evaluate(() => document.querySelectorAll('table#changes b, table#changes script, table#changes img').length), 0,
	   'elements made of the hostile text');
	await w.screenshot('changes');
}

export async function changes_filter_by_state(h) {
	const w = await h.page({ name: 'changes-filter' });
	for (const state of ['suspected', 'confirmed', 'dismissed']) {
		const cps = (await api(`/api/v1/change-points?state=${state}&limit=1000`)).change_points;
		check(cps.length > 0, `no ${state} change point in the store`);
		await w.open(`/changes?state=${state}`);
		const d = await changesDom(w);
		eq(d.state, state, `/changes?state=${state}: select[name=state]`);
		compareChanges(d, cps, `/changes?state=${state}`);
	}
	// Choosing a state in the form loads its list.
	await w.open('/changes');
	await Promise.all([w.page.waitForURL((u) => u.search === '?state=dismissed', { timeout: 60000 }),
			   w.page.selectOption('form#filters select[name=state]', 'dismissed')]);
	await w.ready('/changes?state=dismissed');
	eq((await changesDom(w)).rows.map((r) => r.id), [S.cp.hostile], '/changes after choosing dismissed');
}

export async function banner_on_every_page(h) {
	const w = await h.page({ name: 'banner' });
	const series = sqlOne(S.db, 'SELECT min(id) FROM series');
	for (const p of [...PAGES, `/series/${series}`]) {
		await w.open(p);
		const regs = await expectBanner(w, p);
		eq(regs.map((c) => c.id), [S.cp.regression], `${p}: the located regressions (the improvement is none)`);
	}
	// The banner leads to the change point's row.
	await w.open('/');
	await Promise.all([w.page.waitForURL((u) => u.pathname === '/changes', { timeout: 60000 }),
			   w.page.click('#change-alert a')]);
	await w.ready('/changes');
	eq(await w.page.evaluate(() => location.search + location.hash), `?state=confirmed#cp-${S.cp.regression}`, 'the banner\'s link');
	eq(await w.page.locator(`table#changes tr#cp-${S.cp.regression}[data-state=confirmed]`).count(), 1,
	   'the banner\'s change point on /changes');
	await w.open('/agents');
	await w.screenshot('banner');
}

export async function key_links_to_its_trend(h) {
	const c = (await api('/api/v1/change-points?limit=1000')).change_points.find((x) => x.id === S.cp.regression);
	const w = await h.page({ name: 'changes-trend' });
	await w.open('/changes');
	await Promise.all([w.page.waitForURL((u) => u.pathname === '/trends', { timeout: 60000 }),
			   w.page.click(`tr[data-cp="${S.cp.regression}"] a.trend-link`)]);
	await w.ready('/trends');
	const d = await w.page.evaluate(() => ({ host: document.querySelector('select#host')?.value ?? null,
						 key: document.querySelector('select#key option:checked')?.textContent ?? null,
						 rows: document.querySelectorAll('table#change-points tr[data-after]').length }));
	eq(d.host, c.host, '/trends from a change point: select#host');
	check(d.key && d.key.includes(c.metric) && d.key.includes(c.build_mode) && d.key.startsWith(c.benchmark),
	      `/trends from a change point: select#key shows ${JSON.stringify(d.key)}, not ${c.benchmark}/${c.metric} ${c.build_mode}`);
}

export async function agents_show_their_noise(h) {
	const agents = (await api('/api/v1/agents')).agents;
	eq(agents.map((a) => a.name).sort(), ['e2e-1', 'lab-quiet'], 'the agents');
	const w = await h.page({ name: 'agents-noise' });
	await w.open('/agents');
	await frame(w, '/agents');
	const d = await w.page.evaluate(() => [...document.querySelectorAll('section#noise section.noise[data-agent]')].map((s) => ({
		agent: s.dataset.agent, text: s.textContent,
		rows: [...s.querySelectorAll('table.noise tr[data-benchmark]')].map((tr) => ({
			build_mode: tr.dataset.buildMode, benchmark: tr.dataset.benchmark, metric: tr.dataset.metric,
			sigma: tr.querySelector('[data-field=sigma_pct]')?.dataset.value ?? null,
			mde: tr.querySelector('[data-field=mde_pct]')?.dataset.value ?? null,
			pairs: tr.querySelector('[data-field=pairs]')?.dataset.value ?? null,
			jobs: tr.querySelector('[data-field=jobs]')?.dataset.value ?? null,
			sigmaText: tr.querySelector('[data-field=sigma_pct]')?.textContent ?? null,
		})),
	})));
	eq(d.map((s) => s.agent).sort(), agents.map((a) => a.name).sort(), 'section.noise[data-agent]');
	let keys = 0;
	for (const a of agents) {
		const noise = await api(`/api/v1/hosts/${encodeURIComponent(a.name)}/noise`);
		const s = d.find((x) => x.agent === a.name);
		const what = `/agents noise of ${a.name}`;
		eq(s.rows.map((r) => `${r.build_mode} ${r.benchmark} ${r.metric}`),
		   noise.keys.map((k) => `${k.build_mode} ${k.benchmark} ${k.metric}`), `${what}: rows (build mode, key)`);
		for (const k of noise.keys) {
			const r = s.rows.find((x) => x.build_mode === k.build_mode && x.benchmark === k.benchmark && x.metric === k.metric);
			const kw = `${what} ${k.build_mode} ${k.metric}`;
			eq(r.sigma, String(k.sigma_pct ?? ''), `${kw}: sigma_pct data-value`);
			eq(r.mde, String(k.mde_pct ?? ''), `${kw}: mde_pct data-value`);
			eq(r.pairs, String(k.pairs), `${kw}: pairs data-value`);
			eq(r.jobs, String(k.jobs), `${kw}: jobs data-value`);
			if (typeof k.sigma_pct === 'number')
				eq(r.sigmaText, k.sigma_pct.toFixed(2) + '%', `${kw}: sigma text`);
		}
		if (!noise.keys.length)
			check(s.text.includes('no baselines yet'), `${what}: says ${JSON.stringify(s.text)}, not "no baselines yet"`);
		keys += noise.keys.length;
	}
	// The baseline written in before(): both build modes of e2e-1.
	const e2e = (await api('/api/v1/hosts/e2e-1/noise')).keys;
	check(e2e.length > 0 && e2e.some((k) => k.pairs >= 3 && typeof k.sigma_pct === 'number'),
	      `/api/v1/hosts/e2e-1/noise has no pairs from the baseline: ${JSON.stringify(e2e).slice(0, 300)}`);
	eq([...new Set(e2e.map((k) => k.build_mode))].length, 2, 'build modes of e2e-1\'s noise');
	eq((await api('/api/v1/hosts/lab-quiet/noise')).keys.length, 0, 'keys of lab-quiet\'s noise');
	check(keys > 0, 'no noise row at all');
	// No agent drifts today: no badge.
	for (const a of agents)
		check(a.drift === undefined || a.drift === null, `agent ${a.name} has a drift in the API: ${JSON.stringify(a.drift)}`);
	eq(await w.page.evaluate(() => document.querySelectorAll('table#agents .drift, table#agents tr[data-drift]').length), 0,
	   'drift badges without drift');
	await w.screenshot('agents-noise');
}

// The drift the API will give, through the page's own render function.
export async function drift_renders_as_text(h) {
	const w = await h.page({ name: 'drift' });
	await w.open('/agents');
	const d = await w.page.evaluate(async (now) => {
		const { driftEl } = await import('/assets/agentview.js');
		const show = (x) => {
			const e = driftEl(x);
			if (!e) return null;
			document.querySelector('main').append(e);   // in the page, as the agents table holds it
			return { drift: e.dataset.drift, value: e.dataset.value, badge: e.querySelector('.badge')?.textContent ?? null,
				 tone: e.querySelector('.badge')?.className ?? null, why: e.querySelector('.drift-why')?.textContent ?? null,
				 text: e.textContent, elements: e.querySelectorAll('script, img, b').length };
		};
		return {
			flagged: show({ state: 'flagged', why: '<script>window.__pwned=1</script> mempool\u001b[2J slower \u202eevil', since: now - 3600,
					build_mode: 'demo-release', benchmark: 'mempool_perf', metric: 'mempool.cache', change_pct: -4.25 }),
			drained: show({ state: 'drained', why: 'drained: 3 baselines in a row off', since: now }),
			absent: [show(null), show(undefined), show('x'), show([])],
			pwned: typeof window.__pwned,
		};
	}, NOW);
	eq(d.flagged.drift, 'flagged', 'driftEl(flagged) data-drift');
	eq(d.flagged.value, '-4.25', 'driftEl(flagged) data-value (change_pct)');
	eq(d.flagged.badge, 'drift', 'driftEl(flagged) badge');
	check(/tone-warn/.test(d.flagged.tone), `driftEl(flagged) badge class ${d.flagged.tone}`);
	eq(d.flagged.why, '<script>window.__pwned=1</script> mempool\\x1b[2J slower \\u202eevil', 'driftEl(flagged) why, escaped');
	check(d.flagged.text.includes('demo-release mempool_perf/mempool.cache -4.3%'), `driftEl(flagged) text ${JSON.stringify(d.flagged.text)}`);
	eq(d.flagged.elements, 0, 'elements made of the why');
	check(!UNSAFE.test(d.flagged.text), `a control character in the drift: ${JSON.stringify(d.flagged.text)}`);
	eq(d.drained.drift, 'drained', 'driftEl(drained) data-drift');
	eq(d.drained.badge, 'drained', 'driftEl(drained) badge');
	check(/tone-bad/.test(d.drained.tone), `driftEl(drained) badge class ${d.drained.tone}`);
	eq(d.absent, [null, null, null, null], 'driftEl of no drift');
	eq(d.pwned, 'undefined', 'typeof window.__pwned after the drift');
}

// A drift the controller stored (drift.h's host_drift, as a baseline's
// verdict writes it): the API gives it on the agent, the page shows it.
export async function stored_drift_shows(h) {
	const why = 'mempool_perf mempool.cache -12.5% (p=2e-05, noise 0.4%) against its earlier baselines: ' +
		'kernel "6.1.0-1" -> "<b>6.1.0-2</b>\x1b[2J"';
	write(`INSERT INTO host_drift (host, build_mode, benchmark, metric, kind, commit_oid, change_pct, p,
		noise_pct, why, state, flagged_at) VALUES ('e2e-1', 'demo-release', 'mempool_perf', 'mempool.cache',
		'time', '${oid(7)}', -12.5, 0.00002, 0.4, '${why.replace(/'/g, "''")}' || char(27), 'drained', ${NOW})`);
	try {
		const a = (await api('/api/v1/agents')).agents.find((x) => x.name === 'e2e-1');
		eq(a.drift && a.drift.state, 'drained', 'e2e-1 drift state in the API');
		eq(a.drift.change_pct, -12.5, 'e2e-1 drift change_pct in the API');
		const w = await h.page({ name: 'agents-drift' });
		await w.open('/agents');
		await frame(w, '/agents');
		const d = await w.page.evaluate(() => {
			const e = document.querySelector('table#agents span.drift[data-drift]');
			return e ? { drift: e.dataset.drift, value: e.dataset.value,
				     badge: e.querySelector('.badge')?.textContent ?? null,
				     why: e.querySelector('.drift-why')?.textContent ?? null,
				     bold: document.querySelectorAll('table#agents .drift b').length } : null;
		});
		check(d !== null, 'no drift badge for a drained agent');
		eq(d.drift, 'drained', 'data-drift');
		eq(Number(d.value), -12.5, 'data-value');
		eq(d.badge, 'drained', 'the badge');
		eq(d.why, sanitize(a.drift.why), 'the why text, as sanitised');
		check(!UNSAFE.test(d.why), `a control character in the drift: ${JSON.stringify(d.why)}`);
		eq(d.bold, 0, 'elements made of the why text');
		await w.screenshot('agents-drift');
	} finally {
		write(`DELETE FROM host_drift`);
	}
}

// Last: the store changes under the running controller, and each page
// load tells what it holds now.
export async function banner_follows_the_store(h) {
	const w = await h.page({ name: 'banner-store' });
	// Two located regressions: counted.
	write(`UPDATE change_points SET state = 'confirmed', located_commit = commit_after, bisect_run_id = NULL
	       WHERE id = ${S.cp.hostile}`);
	await w.open('/queue');
	eq((await expectBanner(w, '/queue with two')).length, 2, 'located regressions');
	// One again, the hostile one: its text escaped in the banner.
	write(`UPDATE change_points SET state = 'dismissed', why = 'not a step after all' WHERE id = ${S.cp.regression}`);
	await w.open('/trends');
	const regs = await expectBanner(w, '/trends with the hostile one');
	eq(regs.map((c) => c.id), [S.cp.hostile], 'the located regression');
	const text = await w.page.textContent('#change-alert');
	check(text.includes('main-<b>x</b>\\x09\\u202e'), `the banner does not show the hostile branch escaped: ${JSON.stringify(text)}`);
	eq(await w.page.evaluate(() => document.querySelectorAll('#change-alert *:not(strong):not(span):not(a)').length), 0,
	   'elements made of the hostile text in the banner');
	// None left (the improvement stays confirmed): no banner anywhere.
	write(`UPDATE change_points SET state = 'dismissed' WHERE id = ${S.cp.hostile}`);
	for (const p of PAGES) {
		await w.open(p);
		eq(await expectBanner(w, `${p} without a regression`), [], `${p}: located regressions`);
	}
	check(q(`SELECT id FROM change_points WHERE state = 'confirmed' AND effect > 0`).length === 1, 'the improvement is still confirmed');
	if (!(await w.page.evaluate(() => document.querySelector('#change-alert') === null)))
		fail('a banner without a located regression');
}
