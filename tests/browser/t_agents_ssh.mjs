// SPDX-License-Identifier: MIT
// SSH-driven hosts on the agents page (issue 18).  The store is the
// fixture's (tests/browser/fixture/), migrated, plus SSH agent rows and
// their connection state as the SSH dispatcher stores them (ssh_state.c):
// one in error with hostile text (markup, an <img onerror>, ESC, RLO; the
// dispatcher sanitises what it stores, the page must not rely on it), one
// running a job, one connecting after an earlier error, one idle and one
// never connected.  The controller serves them without an "ssh" section,
// so no dispatcher touches the rows: /api/v1/agents gives them as stored,
// and the page is compared with that answer.  The fixture's daemon agent
// (transport http, "ssh": null) must show no SSH block.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

import { check, ctl, eq, fail, loadFixture, poll, run, sanitize, sql, sqlOne, startController } from './lib.mjs';

const S = {};
const NOW = Math.floor(Date.now() / 1000);
// The code points lib/sanitize.c escapes: never shown raw.
const UNSAFE = /[\u0000-\u001f\u007f-\u009f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]/;
const KEY = 'ssh-ed25519 SHA256:Xy7Qe0vGm3c1H2s9bT4kLwP8nR5fJ6aZ0dC2uV1iO3E';

const write = (query) => run(['sqlite3', '-bail', '-cmd', '.timeout 20000', S.db, query]);
const lit = (s) => (s === null ? 'NULL' : typeof s === 'number' ? String(s) : `'${String(s).replace(/'/g, "''")}'`);

export async function before(h) {
	const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'pg-browser-ssh.'));
	h.onCleanup(() => fs.rmSync(dir, { recursive: true, force: true }));
	const { db, dataDir } = loadFixture(dir);
	S.db = db;
	const cli = path.join(dir, 'cli.json');
	fs.writeFileSync(cli, JSON.stringify({ db, data_dir: dataDir, profiles_dir: path.join(process.env.PG_TOP, 'profiles'),
					       profiles: ['demo.json'] }));
	ctl(cli, 'db', 'migrate');
	S.job = sqlOne(db, 'SELECT min(id) FROM jobs');

	// Agent rows as sched_agent_ssh() makes them (transport ssh, no
	// token), their state rows as ssh_state.c leaves them.
	const hosts = [
		{ name: 'arm-err', target: 'perfgate@arm1.lab:22', state: 'error', host_key: KEY, agent_version: 'perfgate-agent 0.9',
		  // Stored as SQL text so that ESC and RLO are real bytes.
		  last_error: `'connect: <img src=x onerror="window.__pwned=1"><b>refused</b> ' || char(27) || '[2J' || char(8238) || 'evil'`,
		  last_error_at: NOW - 120, connected_at: NOW - 7200, connects: 3, failures: 2 },
		{ name: 'arm-run', target: 'perfgate@arm2.lab:2222', state: 'running', job: S.job, attempt: 2, host_key: KEY, last_seen: NOW,
		  agent_version: 'perfgate-agent 0.9', connected_at: NOW - 600, connects: 1, failures: 0 },
		{ name: 'arm-conn', target: 'ci@arm3.lab:22', state: 'connecting', host_key: null, agent_version: null,
		  last_error: lit('timed out after 10 s'), last_error_at: NOW - 30, connects: 0, failures: 1 },
		{ name: 'arm-idle', target: 'perfgate@arm4.lab:22', state: 'idle', host_key: KEY, last_seen: NOW,
		  agent_version: 'perfgate-agent 0.9 <script>window.__pwned=1</script>', connected_at: NOW - 60, connects: 1, failures: 0 },
		{ name: 'arm-new', target: 'perfgate@arm5.lab:22', state: 'disconnected', connects: 0, failures: 0 },
	];
	const stmts = [];
	for (const x of hosts) {
		stmts.push(`INSERT INTO agents (name, transport, labels, created_at, last_seen) VALUES (${lit(x.name)}, 'ssh',
				'{"arch":"aarch64"}', ${NOW - 86400}, ${lit(x.last_seen ?? null)});`);
		stmts.push(`INSERT INTO ssh_hosts (agent_id, target, state, job_id, attempt, host_key, agent_version, last_error,
				last_error_at, connected_at, connects, failures, updated_at)
			VALUES ((SELECT id FROM agents WHERE name = ${lit(x.name)}), ${lit(x.target)}, ${lit(x.state)},
				${lit(x.job ?? null)}, ${lit(x.attempt ?? null)}, ${lit(x.host_key ?? null)}, ${lit(x.agent_version ?? null)},
				${x.last_error ?? 'NULL'}, ${lit(x.last_error_at ?? null)}, ${lit(x.connected_at ?? null)},
				${x.connects}, ${x.failures}, ${NOW - 5});`);
	}
	run(['sqlite3', '-bail', db, stmts.join('\n')]);
	S.daemons = sql(db, `SELECT name FROM agents WHERE transport = 'http' ORDER BY name`).map((r) => r.name);
	check(S.daemons.length > 0, 'the fixture has no daemon agent');

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

// Each row of table#agents and what its SSH block shows.
function agentsDom(w) {
	return w.page.evaluate(() => ({
		pwned: typeof window.__pwned,
		handlers: [...document.querySelectorAll('*')].filter((el) => [...el.attributes].some((a) => /^on/i.test(a.name))).length,
		made: document.querySelectorAll('table#agents img, table#agents script, table#agents b').length,
		rows: [...document.querySelectorAll('table#agents tr[data-agent]')].map((tr) => {
			const s = tr.querySelectorAll('div.ssh');
			const d = s[0];
			return {
				name: tr.dataset.agent, blocks: s.length,
				inName: d ? d.closest('th[data-field=name]') !== null : null,
				ssh: d ? {
					state: d.dataset.sshState,
					badge: d.querySelector('.badge')?.textContent ?? null,
					tone: d.querySelector('.badge')?.className ?? null,
					text: d.textContent,
					hostkey: d.querySelector('.hostkey')?.textContent ?? null,
					hostkeyFont: d.querySelector('.hostkey') ? getComputedStyle(d.querySelector('.hostkey')).fontFamily : null,
					hostkeyWrap: d.querySelector('.hostkey') ? getComputedStyle(d.querySelector('.hostkey')).overflowWrap : null,
					error: d.querySelector('.ssh-error')?.textContent ?? null,
					errorText: d.querySelector('.ssh-error .ssh-error-text')?.textContent ?? null,
					errorTime: d.querySelector('.ssh-error time')?.getAttribute('datetime') ?? null,
					job: d.querySelector('.ssh-job')?.textContent ?? null,
				} : null,
			};
		}),
	}));
}

export async function ssh_hosts_match_the_api(h) {
	const agents = (await api('/api/v1/agents')).agents;
	const w = await h.page({ name: 'agents-ssh' });
	await w.open('/agents');
	const d = await agentsDom(w);
	eq(d.rows.map((r) => r.name).sort(), agents.map((a) => a.name).sort(), 'table#agents tr[data-agent]');
	for (const a of agents) {
		const r = d.rows.find((x) => x.name === a.name);
		const what = `/agents ${a.name}`;
		if (a.transport !== 'ssh') {
			eq(a.ssh, null, `${what}: "ssh" of a daemon agent in the API`);
			continue;
		}
		check(a.ssh && typeof a.ssh === 'object', `${what}: the API gives no "ssh" object: ${JSON.stringify(a.ssh)}`);
		eq(r.blocks, 1, `${what}: div.ssh blocks`);
		check(r.inName, `${what}: div.ssh is not in the name cell`);
		eq(r.ssh.state, a.ssh.state, `${what}: data-ssh-state`);
		eq(r.ssh.badge, a.ssh.state, `${what}: the state badge`);
		check(r.ssh.text.includes(a.ssh.target), `${what}: the target ${a.ssh.target} is not shown: ${JSON.stringify(r.ssh.text)}`);
		eq(r.ssh.hostkey, a.ssh.host_key === null ? null : sanitize(a.ssh.host_key), `${what}: .hostkey`);
		if (r.ssh.hostkey !== null) {
			check(/mono/i.test(r.ssh.hostkeyFont), `${what}: .hostkey font ${r.ssh.hostkeyFont} is not monospace`);
			eq(r.ssh.hostkeyWrap, 'anywhere', `${what}: .hostkey overflow-wrap`);
		}
		if (a.ssh.agent_version)
			check(r.ssh.text.includes(sanitize(a.ssh.agent_version)), `${what}: the agent version is not shown: ${JSON.stringify(r.ssh.text)}`);
		eq(r.ssh.errorText, a.ssh.last_error === null ? null : sanitize(a.ssh.last_error), `${what}: .ssh-error text`);
		if (a.ssh.last_error !== null && a.ssh.last_error_at !== null)
			eq(r.ssh.errorTime, new Date(a.ssh.last_error_at * 1000).toISOString(), `${what}: the time of the error`);
		eq(r.ssh.job, a.ssh.state === 'running' ? `job ${a.ssh.job} attempt ${a.ssh.attempt}` : null, `${what}: .ssh-job`);
		check(!UNSAFE.test(r.ssh.text), `${what}: a control or bidi character in div.ssh: ${JSON.stringify(r.ssh.text)}`);
	}
	// Every state has a tone of its own kind (connecting waits, error is bad...).
	const tone = (n) => /tone-(\w+)/.exec(d.rows.find((x) => x.name === n).ssh.tone)[1];
	eq(['arm-err', 'arm-run', 'arm-conn', 'arm-idle', 'arm-new'].map(tone), ['bad', 'info', 'wait', 'good', 'muted'],
	   'badge tones of error, running, connecting, idle, disconnected');
	eq(d.pwned, 'undefined', '/agents: typeof window.__pwned');
	eq(d.handlers, 0, '/agents: elements with inline event handlers');
	eq(d.made, 0, '/agents: elements made of the hostile text');
	await w.screenshot('agents-ssh');
}

export async function ssh_error_is_shown_as_text(h) {
	const a = (await api('/api/v1/agents')).agents.find((x) => x.name === 'arm-err');
	check(a.ssh.last_error.includes('<img src=x onerror=') && a.ssh.last_error.includes('\u001b') && a.ssh.last_error.includes('\u202e'),
	      `the API's hostile error lost its hostile parts: ${JSON.stringify(a.ssh.last_error)}`);
	const w = await h.page({ name: 'agents-ssh-error' });
	await w.open('/agents');
	const r = (await agentsDom(w)).rows.find((x) => x.name === 'arm-err');
	eq(r.ssh.state, 'error', 'arm-err data-ssh-state');
	eq(r.ssh.errorText, 'connect: <img src=x onerror="window.__pwned=1"><b>refused</b> \\x1b[2J\\u202eevil', 'arm-err .ssh-error text, escaped');
	check(r.ssh.error.includes(r.ssh.errorText), `arm-err .ssh-error: ${JSON.stringify(r.ssh.error)}`);
	check(!r.ssh.error.startsWith('last error'), `arm-err in error says "last error": ${JSON.stringify(r.ssh.error)}`);
	check(r.ssh.text.includes('3 connects, 2 failures'), `arm-err counts: ${JSON.stringify(r.ssh.text)}`);
	// An error from before a reconnection is shown as the last one.
	const c = (await agentsDom(w)).rows.find((x) => x.name === 'arm-conn');
	check(c.ssh.error.startsWith('last error: timed out after 10 s'), `arm-conn .ssh-error: ${JSON.stringify(c.ssh.error)}`);
	eq(await w.page.evaluate(() => document.querySelectorAll('div.ssh img, div.ssh b, div.ssh script').length), 0, 'elements made of the error');
	eq(await w.page.evaluate(() => typeof window.__pwned), 'undefined', 'typeof window.__pwned');
}

export async function running_host_shows_its_job(h) {
	const w = await h.page({ name: 'agents-ssh-running' });
	await w.open('/agents');
	const r = (await agentsDom(w)).rows.find((x) => x.name === 'arm-run');
	eq(r.ssh.state, 'running', 'arm-run data-ssh-state');
	eq(r.ssh.job, `job ${S.job} attempt 2`, 'arm-run .ssh-job');
	eq(r.ssh.error, null, 'arm-run .ssh-error');
	// No job outside the running state.
	for (const n of ['arm-err', 'arm-conn', 'arm-idle', 'arm-new'])
		eq((await agentsDom(w)).rows.find((x) => x.name === n).ssh.job, null, `${n} .ssh-job`);
}

export async function daemon_agent_shows_no_ssh(h) {
	const w = await h.page({ name: 'agents-daemon' });
	await w.open('/agents');
	const d = await agentsDom(w);
	for (const n of S.daemons) {
		const r = d.rows.find((x) => x.name === n);
		check(r, `no row for the daemon agent ${n}`);
		eq(r.blocks, 0, `${n}: div.ssh blocks of a daemon agent`);
	}
	const never = d.rows.find((x) => x.name === 'arm-new');
	eq(never.ssh.hostkey, null, 'arm-new (never connected) .hostkey');
	eq(never.ssh.error, null, 'arm-new .ssh-error');
	eq(never.ssh.badge, 'disconnected', 'arm-new badge');
}

// The page's own render function on what the store cannot hold (the
// dispatcher sanitises), and on no SSH at all.
export async function sshEl_renders_as_text(h) {
	const w = await h.page({ name: 'ssh-el' });
	await w.open('/agents');
	const d = await w.page.evaluate(async (now) => {
		const { sshEl } = await import('/assets/agentview.js');
		const show = (x) => {
			const e = sshEl(x);
			if (!e) return null;
			document.querySelector('main').append(e);
			return { state: e.dataset.sshState, badge: e.querySelector('.badge')?.textContent ?? null, text: e.textContent,
				 hostkey: e.querySelector('.hostkey')?.textContent ?? null,
				 error: e.querySelector('.ssh-error-text')?.textContent ?? null,
				 job: e.querySelector('.ssh-job')?.textContent ?? null,
				 elements: e.querySelectorAll('img, script, b, iframe').length };
		};
		return {
			hostile: show({ target: 'x@<b>h</b>:22\u001b[31m', state: 'error', job: null, attempt: null,
					host_key: 'ssh-rsa SHA256:\u202eAAAA<img src=x onerror=window.__pwned=1>',
					agent_version: '<iframe src="javascript:window.__pwned=1">', connects: 0, failures: 1,
					last_error: '<img src=x onerror=window.__pwned=1>\u0007\u009b\u2028end', last_error_at: now, updated_at: now }),
			running: show({ target: 't', state: 'running', job: 12, attempt: null }),
			odd: show({}),
			absent: [show(null), show(undefined), show('x'), show([]), show(3)],
			pwned: typeof window.__pwned,
		};
	}, NOW);
	eq(d.hostile.state, 'error', 'sshEl(hostile) data-ssh-state');
	eq(d.hostile.error, '<img src=x onerror=window.__pwned=1>\\x07\\u009b\\u2028end', 'sshEl(hostile) .ssh-error text, escaped');
	eq(d.hostile.hostkey, 'ssh-rsa SHA256:\\u202eAAAA<img src=x onerror=window.__pwned=1>', 'sshEl(hostile) .hostkey, escaped');
	check(d.hostile.text.includes('x@<b>h</b>:22\\x1b[31m'), `sshEl(hostile) target: ${JSON.stringify(d.hostile.text)}`);
	check(d.hostile.text.includes('<iframe src="javascript:window.__pwned=1">'), `sshEl(hostile) version: ${JSON.stringify(d.hostile.text)}`);
	eq(d.hostile.elements, 0, 'elements made of the hostile text');
	check(!UNSAFE.test(d.hostile.text), `a control character in sshEl(hostile): ${JSON.stringify(d.hostile.text)}`);
	eq(d.running.job, 'job 12', 'sshEl(running, no attempt) .ssh-job');
	eq(d.odd.state, '', 'sshEl({}) data-ssh-state');
	eq(d.odd.badge, 'unknown', 'sshEl({}) badge');
	eq(d.absent, [null, null, null, null, null], 'sshEl of no ssh');
	eq(d.pwned, 'undefined', 'typeof window.__pwned');
}

// The dispatcher changes a host's state under the running controller: the
// next 5 s refresh shows it in place, without a reload, focus kept.
export async function ssh_state_follows_the_store(h) {
	const w = await h.page({ name: 'agents-ssh-refresh' });
	await w.open('/agents');
	await w.page.focus('#agents-box > .table-wrap');
	await w.page.evaluate(() => { window.__sameDocument = 1; });
	write(`UPDATE ssh_hosts SET state = 'idle', job_id = NULL, attempt = NULL, updated_at = ${NOW}
	       WHERE agent_id = (SELECT id FROM agents WHERE name = 'arm-run')`);
	await poll('arm-run shown idle', () => w.page.evaluate(() =>
		document.querySelector('tr[data-agent="arm-run"] div.ssh')?.dataset.sshState === 'idle'), 20000);
	const d = await w.page.evaluate(() => ({
		same: window.__sameDocument,
		job: document.querySelector('tr[data-agent="arm-run"] .ssh-job')?.textContent ?? null,
		focus: document.activeElement?.matches('#agents-box > .table-wrap') ?? false,
	}));
	eq(d.same, 1, 'the page was reloaded');
	eq(d.job, null, 'arm-run .ssh-job once idle');
	check(d.focus, 'the focus left the agents table on refresh');
	if (!(await w.page.evaluate(() => document.querySelectorAll('tr[data-agent="arm-run"] div.ssh').length === 1)))
		fail('arm-run has more than one div.ssh after the refresh');
}
