// SPDX-License-Identifier: MIT
// The dashboard against its store, in chromium: a real controller serves
// web/ and the JSON API on the store of a real end-to-end run
// (tests/browser/fixture/) plus a hostile series ingested here from a real
// mail with the controller's own intake.  Every page is loaded and what it
// shows is compared with the store itself (the sqlite3 CLI), through the
// DOM hooks of web/CONTRACT.md: the series list and its checks, each
// series page's per-key medians, p and verdicts and its plots' sample
// counts, a stage log, the trends of a key, the agents, the queue (and no
// regression banner: the fixture has no change point); a click
// through all of them; an admin recheck with the token; the hostile
// series shown as text and nothing run from it.  Every page is watched
// (lib.mjs): a console error, a CSP violation or a request to another
// origin fails the test.  Screenshots in BUILD/screenshots/.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

import {
	HOSTILE_MSGID, check, close, ctl, demoTree, eq, fail, hexText, hostileMbox, loadFixture,
	poll, sanitize, sql, sqlOne, startController,
} from './lib.mjs';

const TOKEN = 'dashboard-admin-token-0123456789abcdef';
const S = {};		// what before() set up

export async function before(h) {
	const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'pg-browser-dash.'));
	h.onCleanup(() => fs.rmSync(dir, { recursive: true, force: true }));
	const { db, dataDir } = loadFixture(dir);
	const profilesDir = demoTree(dir);
	// The hostile series, ingested and planned (on the demo tree: two
	// queued jobs for the queue page) before the daemon starts.
	const cli = path.join(dir, 'cli.json');
	fs.writeFileSync(cli, JSON.stringify({ db, data_dir: dataDir, profiles_dir: profilesDir,
					       profiles: ['demo.json'] }));
	const mbox = path.join(dir, 'hostile.mbox');
	hostileMbox(mbox);
	const out = ctl(cli, 'ingest', '--mbox', mbox);
	check(/^series completed: +1$/m.test(out), `ingest of the hostile mail:\n${out}`);
	ctl(cli, 'plan');
	S.hostile = sqlOne(db, `SELECT p.series_id FROM patches p JOIN messages m ON m.id = p.message_id
				WHERE m.msgid = '${HOSTILE_MSGID}'`);
	check(sql(db, `SELECT id FROM jobs WHERE state = 'queued'`).length > 0, 'the hostile series was not planned');
	const c = await startController({ dir, db, dataDir, profilesDir, adminToken: TOKEN });
	h.onCleanup(() => c.kill());
	h.origin = c.origin;
	Object.assign(S, { dir, db, dataDir, cli, ctl: c });
	// The series with runs and verdicts (the end-to-end one).
	S.e2e = sqlOne(db, `SELECT min(series_id) FROM runs WHERE state = 'done'`);
}

export async function after(h) {
	if (S.ctl)
		await S.ctl.stop();
}

const q = (query) => sql(S.db, query);
const text = (hex) => hexText(hex);

// The common frame of every page, and nothing run from the data: no
// window.__pwned, scripts only from /assets/ and none inline, no image
// the data made, no inline event handler anywhere.
async function frameAndClean(w, what) {
	const d = await w.page.evaluate(() => ({
		nav: ['/', '/trends', '/changes', '/agents', '/queue'].map((href) =>
			!!document.querySelector(`nav a[href="${href}"]`)),
		main: !!document.querySelector('main'),
		alerts: document.body.dataset.alerts ?? null,
		banner: !!document.querySelector('#change-alert'),
		pwned: typeof window.__pwned,
		scripts: [...document.scripts].map((s) => ({ src: s.src, inline: s.textContent.trim().length })),
		images: [...document.images].map((i) => i.getAttribute('src')),
		handlers: [...document.querySelectorAll('*')].flatMap((el) =>
			[...el.attributes].filter((a) => /^on/i.test(a.name)).map((a) => `<${el.localName} ${a.name}>`)),
	}));
	eq(d.nav, [true, true, true, true, true], `${what}: nav links to /, /trends, /changes, /agents, /queue`);
	// The fixture has no change point: no regression banner (t_changes has them).
	eq(d.alerts, '0', `${what}: body[data-alerts] (located regressions)`);
	eq(d.banner, false, `${what}: #change-alert without a change point`);
	check(d.main, `${what}: no <main>`);
	eq(d.pwned, 'undefined', `${what}: typeof window.__pwned`);
	for (const s of d.scripts) {
		check(s.src.startsWith(`${w.origin}/assets/`), `${what}: a script not from /assets/: ${JSON.stringify(s)}`);
		eq(s.inline, 0, `${what}: inline script text of ${s.src}`);
	}
	for (const src of d.images)
		check(src && (src.startsWith('/assets/') || src.startsWith(`${w.origin}/assets/`) || src.startsWith('data:')),
		      `${what}: an image the data made: src=${JSON.stringify(src)}`);
	eq(d.handlers, [], `${what}: inline event handlers`);
}

// Expected text of a stored column as the pages must show it: the
// controller's sanitiser (lib/sanitize.h) in one-line mode.
function shown(hex) {
	return sanitize(text(hex), 'line');
}

function latestChecks() {
	// The latest check per (series, context) in check_outbox.
	return q(`SELECT c.series_id, c.context, c.state FROM check_outbox c
		  WHERE c.id = (SELECT max(d.id) FROM check_outbox d
				WHERE d.series_id = c.series_id AND d.context = c.context)
		  ORDER BY c.series_id, c.context`);
}

export async function series_list_matches_the_store(h) {
	const w = await h.page({ name: 'list' });
	await w.open('/');
	await frameAndClean(w, '/');
	const want = q(`SELECT s.id, s.version, s.total, hex(s.title) AS title, s.submitter_addr AS addr,
			       hex(coalesce(s.submitter_name, '')) AS name,
			       (SELECT count(*) FROM patches p WHERE p.series_id = s.id) AS received
			FROM series s ORDER BY s.id`);
	check(want.length <= 50, `the fixture holds ${want.length} series, more than a first page`);
	const got = await w.page.evaluate(() => [...document.querySelectorAll('table#series tr[data-series-id]')].map((tr) => {
		const id = tr.dataset.seriesId;
		const f = (n) => tr.querySelector(`[data-field="${n}"]`);
		return {
			id: Number(id),
			link: !!tr.querySelector(`a.series-link[href="/series/${id}"]`),
			title: f('title')?.textContent ?? null,
			version: f('version') ? { value: f('version').dataset.value ?? null, text: f('version').textContent } : null,
			patches: f('patches')?.textContent ?? null,
			submitter: f('submitter')?.textContent ?? null,
			date: f('date')?.textContent ?? null,
			checks: [...tr.querySelectorAll('td.check')].map((td) => ({
				context: td.dataset.context, state: td.dataset.state ?? '',
				href: td.querySelector('a')?.getAttribute('href') ?? null,
				text: td.querySelector('a')?.textContent.trim() ?? null,
			})),
		};
	}));
	eq(got.map((r) => r.id).sort((a, b) => a - b), want.map((r) => r.id), 'series ids in table#series');
	const checks = latestChecks();
	for (const s of want) {
		const r = got.find((x) => x.id === s.id);
		const what = `series list row ${s.id}`;
		check(r.link, `${what}: no a.series-link[href="/series/${s.id}"]`);
		eq(r.title, shown(s.title), `${what}: [data-field=title] text`);
		check(r.version, `${what}: no [data-field=version]`);
		eq(r.version.value, String(s.version), `${what}: [data-field=version] data-value`);
		check(r.patches !== null && r.patches.includes(String(s.total)) && r.patches.includes(String(s.received)),
		      `${what}: [data-field=patches] ${JSON.stringify(r.patches)} shows neither ${s.received} nor ${s.total}`);
		const who = s.name ? shown(s.name) : s.addr;
		check(r.submitter !== null && (r.submitter.includes(who) || r.submitter.includes(s.addr)),
		      `${what}: [data-field=submitter] ${JSON.stringify(r.submitter)} shows neither ${JSON.stringify(who)} nor ${s.addr}`);
		check(r.date !== null && r.date.trim() !== '', `${what}: [data-field=date] is empty`);
		const wantChecks = checks.filter((c) => c.series_id === s.id).map((c) => `${c.context}=${c.state}`);
		const gotChecks = r.checks.filter((c) => c.state !== '').map((c) => `${c.context}=${c.state}`).sort();
		eq(gotChecks, wantChecks, `${what}: td.check[data-context][data-state] (latest check per context)`);
		for (const c of r.checks.filter((x) => x.state !== '')) {
			eq(c.href, `/series/${s.id}#ctx-${c.context}`, `${what}: the link of check ${c.context}`);
			eq(c.text, c.state, `${what}: the text of check ${c.context}`);
		}
	}
	await w.screenshot('list');
}

export async function hostile_series_is_text(h) {
	const s = q(`SELECT hex(title) AS title, hex(coalesce(submitter_name, '')) AS name,
		     submitter_addr AS addr FROM series WHERE id = ${S.hostile}`)[0];
	const title = text(s.title);
	check(title.includes('<script>window.__pwned=1</script>') && title.includes('onerror="window.__pwned=1"'),
	      `the stored hostile title lost its markup: ${JSON.stringify(title)}`);
	const w = await h.page({ name: 'hostile' });
	await w.open('/');
	await frameAndClean(w, '/ with the hostile series');
	eq(await w.page.evaluate((id) => document.querySelector(`tr[data-series-id="${id}"] [data-field=title]`)?.textContent ?? null, S.hostile),
	   shown(s.title), 'the hostile title in the list');
	await w.open(`/series/${S.hostile}`);
	await frameAndClean(w, `/series/${S.hostile}`);
	eq(await w.page.textContent('h1#title'), shown(s.title), 'h1#title of the hostile series');
	const sub = await w.page.textContent('#submitter');
	check(sub.includes(shown(s.name)) || sub.includes(s.addr),
	      `#submitter ${JSON.stringify(sub)} shows neither ${JSON.stringify(shown(s.name))} nor ${s.addr}`);
	await w.screenshot('series-hostile');
}

// The series page's rendering of the jobs, keys, plots and stages.
async function seriesDom(w) {
	return w.page.evaluate(() => ({
		title: document.querySelector('h1#title')?.textContent ?? null,
		patches: document.querySelectorAll('ol#patches > li').length,
		base: document.querySelector('#base')?.textContent ?? null,
		versions: document.querySelectorAll('#versions a').length,
		runs: [...document.querySelectorAll('section.run[data-run]')].map((s) => Number(s.dataset.run)),
		contexts: [...document.querySelectorAll('section.context[id]')].map((s) => ({ id: s.id, state: s.dataset.state ?? null })),
		reproduce: [...document.querySelectorAll('pre.reproduce')].map((p) => p.textContent),
		fingerprints: document.querySelectorAll('dl.fingerprint').length,
		jobs: [...document.querySelectorAll('section.job[data-job]')].map((s) => ({
			job: Number(s.dataset.job),
			stateCell: s.querySelector('[data-field=state]')?.textContent.trim() ?? null,
			progress: !!s.querySelector('[data-field=state] progress, [data-field=state] .progress'),
			keys: [...s.querySelectorAll('table.keys tr.key')].map((tr) => ({
				benchmark: tr.dataset.benchmark, metric: tr.dataset.metric, classes: [...tr.classList],
				cells: Object.fromEntries([...tr.querySelectorAll('td[data-field]')].map((td) =>
					[td.dataset.field, { value: td.dataset.value ?? null, text: td.textContent }])),
			})),
			figures: [...s.querySelectorAll('figure.plot')].map((f) => ({ metric: f.dataset.metric ?? null,
									       points: f.dataset.points ?? null })),
			stages: [...s.querySelectorAll('ul.stages > li[data-stage]')].map((li) => ({
				stage: li.dataset.stage, attempt: li.dataset.attempt, link: !!li.querySelector('a.log-link'),
			})),
		})),
	}));
}

export async function series_pages_match_the_store(h) {
	const all = q(`SELECT id, hex(title) AS title, project, submitter_addr, series_key FROM series ORDER BY id`);
	const w = await h.page({ name: 'series' });
	for (const s of all) {
		const where = `/series/${s.id}`;
		await w.open(where);
		await frameAndClean(w, where);
		const d = await seriesDom(w);
		eq(d.title, shown(s.title), `${where}: h1#title`);
		eq(d.patches, sqlOne(S.db, `SELECT count(*) FROM patches WHERE series_id = ${s.id}`), `${where}: ol#patches > li`);
		const versions = sqlOne(S.db, `SELECT count(*) FROM series WHERE project = '${s.project.replace(/'/g, "''")}'
			AND submitter_addr = '${s.submitter_addr.replace(/'/g, "''")}' AND series_key = '${s.series_key.replace(/'/g, "''")}'`);
		check(d.versions >= versions - 1 && d.versions <= versions,
		      `${where}: ${d.versions} #versions links for ${versions} versions`);
		const runs = q(`SELECT id, tree, branch, base_commit FROM runs WHERE series_id = ${s.id} ORDER BY id`);
		eq(d.runs.sort((a, b) => a - b), runs.map((r) => r.id), `${where}: section.run[data-run]`);
		if (runs.length) {
			const r = runs[runs.length - 1];
			check(d.base && d.base.includes(r.tree) && d.base.includes(r.branch) && d.base.includes(r.base_commit.slice(0, 7)),
			      `${where}: #base ${JSON.stringify(d.base)} does not show ${r.tree} ${r.branch} ${r.base_commit.slice(0, 7)}`);
			// The context verdicts of the latest run.
			for (const v of q(`SELECT context, state FROM verdicts WHERE run_id = ${r.id} AND job_id IS NULL`)) {
				const c = d.contexts.find((x) => x.id === `ctx-${v.context}`);
				check(c, `${where}: no section.context#ctx-${v.context}`);
				eq(c.state, v.state, `${where}: section.context#ctx-${v.context} data-state`);
			}
		}
		const jobs = q(`SELECT j.id, j.state FROM jobs j JOIN runs r ON r.id = j.run_id
				WHERE r.series_id = ${s.id} ORDER BY j.id`);
		eq(d.jobs.map((j) => j.job).sort((a, b) => a - b), jobs.map((j) => j.id), `${where}: section.job[data-job]`);
		for (const j of jobs) {
			const dj = d.jobs.find((x) => x.job === j.id);
			const jw = `${where} job ${j.id}`;
			// An ended job shows its state, not the agent's last stage report.
			if (!['leased', 'running'].includes(j.state))
				check(!dj.progress && !/%/.test(dj.stateCell),
				      `${jw}: ${j.state} job shows a stage's progress: ${JSON.stringify(dj.stateCell)}`);
			const verdicts = q(`SELECT benchmark, metric, base_median, patched_median, p, state FROM verdicts
					    WHERE job_id = ${j.id} AND metric IS NOT NULL ORDER BY benchmark, metric`);
			for (const v of verdicts) {
				const k = dj.keys.find((x) => x.benchmark === v.benchmark && x.metric === v.metric);
				const kw = `${jw} key ${v.benchmark}/${v.metric}`;
				check(k, `${jw}: no tr.key[data-benchmark="${v.benchmark}"][data-metric="${v.metric}"]` +
				      ` (rows: ${dj.keys.map((x) => x.metric).join(', ')})`);
				for (const f of ['base_median', 'patched_median', 'p', 'verdict'])
					check(k.cells[f], `${kw}: no td[data-field=${f}]`);
				close(k.cells.base_median.value, v.base_median, `${kw}: base_median data-value`);
				close(k.cells.patched_median.value, v.patched_median, `${kw}: patched_median data-value`);
				close(k.cells.p.value, v.p, `${kw}: p data-value`);
				eq(k.cells.verdict.value, v.state, `${kw}: verdict data-value`);
				for (const cls of ['regression', 'improvement'])
					eq(k.classes.includes(cls), v.state === cls, `${kw}: tr.key.${cls}`);
			}
			const nsamples = q(`SELECT metric, count(*) AS n FROM samples WHERE job_id = ${j.id} GROUP BY metric`);
			if (nsamples.length)
				check(dj.figures.length > 0, `${jw}: no figure.plot for its ${nsamples.length} keys with samples`);
			for (const f of dj.figures) {
				const n = nsamples.find((x) => x.metric === f.metric);
				check(n, `${jw}: figure.plot[data-metric=${JSON.stringify(f.metric)}] for a metric without samples`);
				eq(f.points, String(n.n), `${jw}: figure.plot[data-metric="${f.metric}"] data-points (samples, both sides, all attempts)`);
			}
			const logs = q(`SELECT stage, attempt FROM logs WHERE job_id = ${j.id} ORDER BY attempt, stage`);
			eq(dj.stages.map((x) => `${x.attempt}/${x.stage}`).sort(), logs.map((x) => `${x.attempt}/${x.stage}`).sort(),
			   `${jw}: ul.stages > li[data-stage][data-attempt]`);
			check(dj.stages.every((x) => x.link), `${jw}: a stage without a.log-link`);
		}
		if (sqlOne(S.db, `SELECT count(*) FROM results r JOIN jobs j ON j.id = r.job_id JOIN runs u ON u.id = j.run_id
				  WHERE u.series_id = ${s.id} AND r.fingerprint <> '{}'`) > 0) {
			check(d.fingerprints > 0, `${where}: no dl.fingerprint`);
			check(d.reproduce.length > 0 && d.reproduce.every((t) => t.trim() !== ''), `${where}: no pre.reproduce with text`);
		}
		if (s.id === S.e2e)
			await w.screenshot('series');
	}
}

export async function a_stage_log_opens(h) {
	const log = q(`SELECT l.job_id, l.attempt, l.stage, l.path FROM logs l JOIN jobs j ON j.id = l.job_id
		       JOIN runs r ON r.id = j.run_id WHERE r.series_id = ${S.e2e} AND l.stage = 'bench'
		       ORDER BY l.job_id, l.attempt LIMIT 1`)[0];
	check(log, 'the fixture has no bench log');
	const w = await h.page({ name: 'log' });
	await w.open(`/series/${S.e2e}`);
	const link = w.page.locator(`section.job[data-job="${log.job_id}"] ul.stages > ` +
				    `li[data-stage="${log.stage}"][data-attempt="${log.attempt}"] a.log-link`);
	eq(await link.count(), 1, `the log link of job ${log.job_id} attempt ${log.attempt} ${log.stage}`);
	await link.click();
	await w.page.waitForFunction(() => (document.querySelector('pre#log')?.textContent || '').trim() !== '',
				     null, { timeout: 60000 });
	const shownLog = await w.page.textContent('pre#log');
	const file = sanitize(fs.readFileSync(path.join(S.dataDir, log.path)), 'block');
	const fileLines = new Set(file.split('\n'));
	const lines = shownLog.split('\n').filter((l) => l.trim() !== '');
	for (const l of lines)
		check(fileLines.has(l), `pre#log shows a line that is not in ${log.path}: ${JSON.stringify(l)}`);
	const last = file.split('\n').filter((l) => l.trim() !== '').pop();
	check(lines.includes(last), `pre#log does not show the log's last line ${JSON.stringify(last)}`);
	check(w.requests.some((r) => r.url.startsWith(`${w.origin}/api/v1/jobs/${log.job_id}/logs/${log.attempt}/${log.stage}`)),
	      `the log was not fetched from /api/v1/jobs/${log.job_id}/logs/${log.attempt}/${log.stage}`);
	await w.screenshot('series-log');
}

// click(w, selector, path): follow a link, wait for the page it leads
// to and for its data.
async function click(w, selector, where) {
	const l = w.page.locator(selector).first();
	check(await l.count() > 0, `no ${selector} on ${w.page.url()}`);
	await Promise.all([w.page.waitForURL((u) => u.pathname === where, { timeout: 60000 }), l.click()]);
	await w.ready(where);
	await frameAndClean(w, where);
}

export async function click_through(h) {
	const w = await h.page({ name: 'click' });
	await w.open('/');
	await click(w, `tr[data-series-id="${S.e2e}"] a.series-link`, `/series/${S.e2e}`);
	await click(w, 'nav a[href="/trends"]', '/trends');
	await click(w, 'nav a[href="/changes"]', '/changes');
	await click(w, 'nav a[href="/agents"]', '/agents');
	await click(w, 'nav a[href="/queue"]', '/queue');
	await click(w, 'nav a[href="/"]', '/');
}

export async function trends_match_the_history(h) {
	const keys = q(`SELECT host, tree, branch, build_mode, benchmark, metric, count(*) AS n FROM history
			GROUP BY 1, 2, 3, 4, 5, 6 ORDER BY n DESC, host, build_mode, benchmark, metric`);
	check(keys.length > 0, 'the fixture has no history');
	const w = await h.page({ name: 'trends' });
	await w.open('/trends');
	await frameAndClean(w, '/trends');
	// select#host and select#key, or one select#trend: every host is
	// offered.
	const opts = await w.page.evaluate(() => [...document.querySelectorAll('select#host option, select#trend option')]
		.map((o) => `${o.value} ${o.textContent}`));
	for (const host of new Set(keys.map((k) => k.host)))
		check(opts.some((o) => o.includes(host)), `no option of select#host or select#trend offers ${host} (${JSON.stringify(opts)})`);
	const k = keys[0];
	const qs = new URLSearchParams({ host: k.host, tree: k.tree, branch: k.branch, build_mode: k.build_mode,
					 benchmark: k.benchmark, metric: k.metric });
	await w.open(`/trends?${qs}`);
	await frameAndClean(w, '/trends?...');
	const d = await w.page.evaluate(() => ({
		points: document.querySelector('figure#trend-plot')?.dataset.points ?? null,
		rows: [...document.querySelectorAll('table#trend-points tr[data-commit]')].map((tr) => ({
			commit: tr.dataset.commit, series: !!tr.querySelector('a[href^="/series/"]') })),
		changePoints: !!document.querySelector('table#change-points'),
	}));
	const what = `/trends for ${k.host} ${k.build_mode} ${k.benchmark}/${k.metric}`;
	eq(d.points, String(k.n), `${what}: figure#trend-plot data-points (history rows)`);
	eq(d.rows.length, k.n, `${what}: table#trend-points tr[data-commit]`);
	const commits = new Set(q(`SELECT commit_oid FROM history WHERE host = '${k.host}' AND build_mode = '${k.build_mode}'
				   AND metric = '${k.metric}' AND benchmark = '${k.benchmark}'`).map((r) => r.commit_oid));
	for (const r of d.rows)
		check(commits.has(r.commit), `${what}: a point at commit ${r.commit} the history does not have`);
	const withJob = sqlOne(S.db, `SELECT count(*) FROM history WHERE host = '${k.host}' AND build_mode = '${k.build_mode}'
				      AND metric = '${k.metric}' AND benchmark = '${k.benchmark}' AND job_id IS NOT NULL`);
	eq(d.rows.filter((r) => r.series).length, withJob, `${what}: points with a link to their series`);
	check(d.changePoints, `${what}: no table#change-points`);
	await w.screenshot('trends');
}

export async function agents_match_the_store(h) {
	const w = await h.page({ name: 'agents' });
	await w.open('/agents');
	await frameAndClean(w, '/agents');
	const want = q(`SELECT name, enabled FROM agents ORDER BY name`);
	const got = await w.page.evaluate(() => [...document.querySelectorAll('table#agents tr[data-agent]')].map((tr) => ({
		name: tr.dataset.agent,
		state: tr.querySelector('[data-field=state]')?.textContent.trim() ?? null,
		fields: ['job', 'stage', 'eta', 'last_seen'].filter((f) => tr.querySelector(`[data-field=${f}]`)),
	})));
	eq(got.map((a) => a.name).sort(), want.map((a) => a.name), 'table#agents tr[data-agent]');
	for (const a of want) {
		const g = got.find((x) => x.name === a.name);
		check(['busy', 'idle', 'offline', 'disabled'].includes(g.state), `agent ${a.name}: state ${JSON.stringify(g.state)}`);
		eq(g.state === 'disabled', a.enabled === 0, `agent ${a.name} shown disabled`);
		eq(g.fields, ['job', 'stage', 'eta', 'last_seen'], `agent ${a.name}: [data-field] cells`);
	}
	await w.screenshot('agents');
}

export async function queue_matches_the_store(h) {
	const w = await h.page({ name: 'queue' });
	await w.open('/queue');
	await frameAndClean(w, '/queue');
	const got = await w.page.evaluate(() => ({
		queued: [...document.querySelectorAll('table#queue-queued tr[data-job]')].map((tr) => ({
			job: Number(tr.dataset.job),
			position: tr.querySelector('[data-field=position]')?.dataset.value ?? null,
			waiting: tr.querySelector('[data-field=waiting]')?.textContent.trim() ?? null,
		})),
		running: [...document.querySelectorAll('table#queue-running tr[data-job]')].map((tr) => Number(tr.dataset.job)),
	}));
	const queued = q(`SELECT id FROM jobs WHERE state = 'queued' ORDER BY id`).map((r) => r.id);
	const running = q(`SELECT id FROM jobs WHERE state IN ('leased', 'running') ORDER BY id`).map((r) => r.id);
	check(queued.length > 0, 'no queued job in the store (the hostile series was planned in before())');
	eq(got.queued.map((r) => r.job).sort((a, b) => a - b), queued, 'table#queue-queued tr[data-job]');
	eq(got.running.sort((a, b) => a - b), running, 'table#queue-running tr[data-job]');
	eq(got.queued.map((r) => r.position).sort((a, b) => Number(a) - Number(b)),
	   queued.map((_, i) => String(i + 1)), 'the queue positions (data-value)');
	for (const r of got.queued)
		check(r.waiting, `queued job ${r.job}: [data-field=waiting] says nothing (no agent is online)`);
	await w.screenshot('queue');
}

async function login(w, token) {
	await w.page.click('button#admin-login');
	await w.page.locator('form#admin input#admin-token[type=password]').fill(token);
	await w.page.locator('form#admin input#admin-token').press('Enter');
	await w.page.locator('form#recheck button[type=submit]').waitFor({ state: 'visible', timeout: 60000 });
}

export async function a_wrong_token_is_refused(h) {
	const w = await h.page({ name: 'admin-wrong', allowStatus: [401], allowConsole: [/status of 401/] });
	const before = sqlOne(S.db, 'SELECT count(*) FROM recheck_requests');
	await w.open(`/series/${S.e2e}`);
	await login(w, 'not-the-token');
	await w.page.click('form#recheck button[type=submit]');
	await w.page.waitForFunction(() => (document.querySelector('#recheck-result')?.textContent || '').trim() !== '',
				     null, { timeout: 60000 });
	const res = await w.page.textContent('#recheck-result');
	check(/401|wrong admin token/i.test(res), `#recheck-result after a wrong token: ${JSON.stringify(res)}`);
	eq(sqlOne(S.db, 'SELECT count(*) FROM recheck_requests'), before, 'recheck requests after a wrong token');
	check(w.requests.some((r) => r.method === 'POST' && r.url.split('?')[0] === `${w.origin}/api/v1/series/${S.e2e}/recheck`),
	      'no POST to the recheck endpoint');
}

export async function admin_rechecks_the_series(h) {
	const w = await h.page({ name: 'admin' });
	const before = sqlOne(S.db, `SELECT coalesce(max(id), 0) FROM recheck_requests`);
	await w.open(`/series/${S.e2e}`);
	await login(w, TOKEN);
	await w.page.click('form#recheck button[type=submit]');
	const r = await poll('the recheck request in the store', () =>
		q(`SELECT id, origin, contexts, state FROM recheck_requests WHERE id > ${before} AND series_id = ${S.e2e}`)[0]);
	eq(r.origin, 'api', 'the new recheck request\'s origin');
	await w.page.waitForFunction(() => (document.querySelector('#recheck-result')?.textContent || '').trim() !== '',
				     null, { timeout: 60000 });
	const res = await w.page.textContent('#recheck-result');
	check(res.includes('202') || res.includes(String(r.id)), `#recheck-result says neither 202 nor ${r.id}: ${JSON.stringify(res)}`);
	// The token only in the Authorization header of the admin request.
	for (const x of w.requests)
		check(!x.url.includes(TOKEN), `the token is in a URL: ${x.method} ${x.url}`);
	const post = w.requests.find((x) => x.method === 'POST' &&
				     x.url.split('?')[0] === `${w.origin}/api/v1/series/${S.e2e}/recheck`);
	check(post, 'no POST to the recheck endpoint');
	eq(post.headers.authorization, `Bearer ${TOKEN}`, 'the recheck request\'s Authorization header');
	eq((await w.context.cookies()).filter((c) => c.value.includes(TOKEN)).length, 0, 'cookies holding the token');
	const stores = await w.page.evaluate(() => ({ session: Object.values(sessionStorage), local: Object.values(localStorage) }));
	check(stores.session.some((v) => v.includes(TOKEN)), 'the token is not in sessionStorage');
	check(!stores.local.some((v) => v.includes(TOKEN)), 'the token is in localStorage');
	// The new recheck on the page, after a reload.
	await w.open(`/series/${S.e2e}`);
	const rechecks = await w.page.textContent('#rechecks');
	check(rechecks.toLowerCase().includes('api') && rechecks.includes(r.contexts),
	      `#rechecks does not show the API recheck of ${r.contexts}: ${JSON.stringify(rechecks)}`);
	await w.screenshot('series-recheck');
	await w.page.click('button#admin-logout');
	await poll('the token gone from sessionStorage after logout', async () =>
		!(await w.page.evaluate(() => Object.values(sessionStorage))).some((v) => v.includes(TOKEN)));
}

export async function missing_series_is_404(h) {
	const w = await h.page({ name: 'missing', allowStatus: [404], allowConsole: [/status of 404/] });
	const missing = sqlOne(S.db, 'SELECT coalesce(max(id), 0) + 1000 FROM series');
	await w.goto(`/series/${missing}`, 404);
	const d = await w.page.evaluate(() => ({ main: !!document.querySelector('main'),
						 nav: !!document.querySelector('nav a[href="/"]') }));
	check(d.main && d.nav, `the 404 page of /series/${missing} has no nav/main: ${JSON.stringify(d)}`);
	const html = await w.page.content();
	if (/<script>(?!\s*<\/script>)/.test(html))
		fail(`the 404 page has an inline script`);
}
