// harness.mjs: what the browser tests share: a real `weir server` on a free loopback port in a
// temporary home (a user admin with a password, the token, a DAG folder of the test's choice),
// headless Debian chromium through playwright-core, logging in through the login page, waiting,
// and screenshots into SHOTS (below).  Nothing is mocked.  Every wait has a finite timeout.
//
//   const weir = await startWeir({ dags: 'path/to/dags' });
//   const { browser, page } = await openBrowser(weir);
//   await login(page, weir);
//   ...
//   await screenshot(page, 'jobs-list');
//   await browser.close(); await weir.stop();
//
// or the first two at once (`startUi(opts, { loggedIn: true })` logs in too):
//
//   const ui = await startUi();
//   ... ui.weir, ui.page ...
//   await ui.stop();
//
// (`withUi((ui) => ({ weir, page } = ui))` does the start and the stop as a file's hooks)
//
// or, for the DAG pages, all of that at once (the DAG files copied into a fresh folder):
//
//   const ui = await startDagsUi('weir-ui-x-', [file], { dagCount: 1 });
//   ... ui.weir, ui.page ...
//   await ui.stop();

import { spawn, spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { copyFileSync, mkdtempSync, mkdirSync, readFileSync, readdirSync, readlinkSync, rmSync, writeFileSync, openSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir, userInfo } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { after, before } from 'node:test';
import { chromium } from 'playwright-core';

export const REPO = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');
export const WEIR_BIN = process.env.WEIR_BIN || join(REPO, 'weir');
export const CHROMIUM = process.env.CHROMIUM || '/usr/bin/chromium';
// Screenshots go to build/ui-shots, so a test run leaves the tree as it was; `make
// ui-screenshots` sets WEIR_UI_SHOTS to docs/ui to refresh the pictures docs/ui.md shows.
export const SHOTS = process.env.WEIR_UI_SHOTS || join(REPO, 'build', 'ui-shots');
const MARK_VAR = 'WEIR_SYSTEST_MARK';

// Declared resources, so that the tests do not depend on this machine's size.
const BASE_CONFIG = `resources:
  vcores: 16
  memory: 16g
  gpus: 0
kill_grace_seconds: 2
`;

export const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

// Polls pred() (sync or async) until it returns something truthy; throws naming `what`.
export async function waitFor(pred, { timeout = 30000, interval = 200, what = 'a condition' } = {}) {
	const deadline = Date.now() + timeout;
	let last;
	while (Date.now() < deadline) {
		try {
			last = await pred();
		} catch (e) {
			last = e;
		}
		if (last && !(last instanceof Error)) return last;
		await sleep(interval);
	}
	throw new Error(`timed out after ${timeout} ms waiting for ${what} (last: ${last instanceof Error ? last.message : JSON.stringify(last)})`);
}

function freePort() {
	return new Promise((res, rej) => {
		const s = createServer();
		s.unref();
		s.on('error', rej);
		s.listen(0, '127.0.0.1', () => {
			const { port } = s.address();
			s.close(() => res(port));
		});
	});
}

function hashPassword(password) {
	const r = spawnSync(WEIR_BIN, ['hash-password'], { input: password + '\n', encoding: 'utf8', timeout: 60000 });
	if (r.status !== 0) throw new Error(`weir hash-password exited ${r.status}: ${r.stderr}`);
	return r.stdout.trim();
}

// Live processes whose environment holds the server's marker or whose working directory is
// under its home: what a server's jobs left behind.
function leftovers(mark, home) {
	const found = [];
	for (const name of readdirSync('/proc')) {
		if (!/^\d+$/.test(name) || Number(name) === process.pid) continue;
		try {
			const stat = readFileSync(`/proc/${name}/stat`, 'utf8');
			const st = stat.slice(stat.lastIndexOf(')') + 2).split(' ')[0];
			if (st === 'Z' || st === 'X') continue;
			let env = '';
			let cwd = '';
			try {
				env = readFileSync(`/proc/${name}/environ`, 'latin1');
			} catch (e) { /* not ours to read */ }
			try {
				cwd = readlinkSync(`/proc/${name}/cwd`);
			} catch (e) { /* gone or not ours */ }
			if (env.includes(mark) || cwd === home || cwd.startsWith(home + '/')) found.push(Number(name));
		} catch (e) {
			// the process ended while we looked
		}
	}
	return found;
}

// Starts `weir server`.  opts: dags (a folder; default an empty one in the temp dir),
// config (YAML appended to the base config), base (YAML in place of the base config: other
// resources), password (admin's; default random), users (more users beside admin: [{name,
// password, role}], role one of Viewer, User, Op, Admin).
// Returns {url, port, home, dir, token, user, password, api(), logText(), stop()}.
export async function startWeir(opts = {}) {
	if (!WEIR_BIN) throw new Error('set WEIR_BIN');
	const dir = mkdtempSync(join(tmpdir(), 'weir-ui-'));
	const home = join(dir, 'home');
	mkdirSync(home, { mode: 0o700 });
	const dags = opts.dags ? resolve(opts.dags) : join(dir, 'dags');
	mkdirSync(dags, { recursive: true });
	const user = 'admin';
	const password = opts.password || 'pw-' + randomBytes(6).toString('hex');
	let config = (opts.base || BASE_CONFIG) + `users:\n  - name: ${user}\n    password_hash: "${hashPassword(password)}"\n`;
	for (const u of opts.users || [])
		config += `  - name: ${u.name}\n    password_hash: "${hashPassword(u.password)}"\n` +
			(u.role ? `    role: ${u.role}\n` : '');
	config += opts.config || '';
	// tasks as the server's own user (docs/security.md: the shared mode): the home sits in a
	// temporary folder (0700) no other user could enter, and tasks write beside it
	if (!/^task_user\s*:/m.test(config)) config += `task_user: ${userInfo().username}\n`;
	const cfgPath = join(dir, 'weir.yaml');
	writeFileSync(cfgPath, config);
	const port = await freePort();
	const url = `http://127.0.0.1:${port}`;
	const logPath = join(dir, 'server.log');
	const log = openSync(logPath, 'a');
	const mark = 'weir-uitest-' + randomBytes(8).toString('hex');
	const env = { ...process.env, [MARK_VAR]: mark };
	delete env.WEIR_TOKEN;
	delete env.WEIR_SERVER;
	const proc = spawn(WEIR_BIN, ['server', '--home', home, '--listen', `127.0.0.1:${port}`, '--config', cfgPath, '--dags', dags],
		{ stdio: ['ignore', log, log], env, detached: true });
	let exited = null;
	proc.on('exit', (code, sig) => (exited = { code, sig }));
	const logText = () => {
		try {
			return readFileSync(logPath, 'utf8').slice(-8000);
		} catch (e) {
			return '';
		}
	};
	const weir = { url, port, home, dir, dags, user, password, proc, mark, logText, token: null };
	await waitFor(async () => {
		if (exited) throw new Error(`weir server exited ${JSON.stringify(exited)}:\n${logText()}`);
		const r = await fetch(url + '/api/v1/health').catch(() => null);
		return r && r.ok;
	}, { timeout: 30000, what: 'weir server healthy' }).catch((e) => {
		if (exited) throw new Error(`weir server exited ${JSON.stringify(exited)}:\n${logText()}`);
		throw e;
	});
	weir.token = readFileSync(join(home, 'token'), 'utf8').trim();

	// The API with the token: {status, body (parsed JSON or text), headers}.
	weir.api = async (method, path, body, { headers = {} } = {}) => {
		const init = { method, headers: { Authorization: 'Bearer ' + weir.token, ...headers } };
		if (body !== undefined) {
			init.headers['Content-Type'] = 'application/json';
			init.body = JSON.stringify(body);
		}
		const r = await fetch(url + path, init);
		const text = await r.text();
		let parsed = text;
		try {
			parsed = JSON.parse(text);
		} catch (e) { /* text */ }
		return { status: r.status, body: parsed, headers: r.headers };
	};
	weir.submit = async (spec) => {
		const r = await weir.api('POST', '/api/v1/jobs', spec);
		if (r.status !== 201) throw new Error(`POST /api/v1/jobs -> ${r.status} ${JSON.stringify(r.body)}`);
		return r.body;
	};
	weir.job = async (id) => (await weir.api('GET', `/api/v1/jobs/${id}`)).body;

	weir.stop = async () => {
		if (!exited) {
			proc.kill('SIGTERM');
			const deadline = Date.now() + 15000;
			while (!exited && Date.now() < deadline) await sleep(100);
			if (!exited) proc.kill('SIGKILL');
		}
		for (const pid of leftovers(mark, home)) {
			try {
				process.kill(pid, 'SIGKILL');
			} catch (e) { /* already gone */ }
		}
		if (!process.env.WEIR_UI_KEEP) rmSync(dir, { recursive: true, force: true });
	};
	return weir;
}

// A fresh headless chromium (its own temporary profile) and a page at 1280x800 on the
// server's UI.  page.errors collects uncaught page errors and console errors (a resource
// answered 4xx shows there too).
export async function openBrowser(weir, { width = 1280, height = 800 } = {}) {
	const browser = await chromium.launch({
		executablePath: CHROMIUM,
		headless: true,
		args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking',
			'--disable-component-update', '--disable-sync'],
	});
	const context = await browser.newContext({ viewport: { width, height }, baseURL: weir ? weir.url : undefined,
		acceptDownloads: true });
	const page = await context.newPage();
	page.setDefaultTimeout(30000);
	page.errors = [];
	page.on('pageerror', (e) => page.errors.push('pageerror: ' + e.message));
	page.on('console', (m) => {
		if (m.type() === 'error') page.errors.push('console: ' + m.text());
	});
	return { browser, context, page };
}

// Logs in through the login page with admin's password; resolves on the jobs list.
export async function login(page, weir, { user = weir.user, password = weir.password } = {}) {
	await page.goto(weir.url + '/#/login');
	await page.getByTestId('login-user').fill(user);
	await page.getByTestId('login-password').fill(password);
	await page.getByTestId('login-submit').click();
	await page.getByTestId('session-user').filter({ hasText: user }).waitFor();
	// the header shows the user before the login page moves on: wait for the jobs list, so
	// that a page the test goes to next is not left for it
	await page.getByTestId('jobs-page').waitFor();
	page.errors.length = 0; // the session check before logging in answered 401, as it should
	return page;
}

// startWeir(opts) and a browser on it (openBrowser), logged in when `loggedIn`.  Resolves to
// { weir, browser, page, stop }; stop() closes both.  When a step fails, what was started is
// stopped before the error is thrown.
export async function startUi(opts = {}, { loggedIn = false } = {}) {
	const ui = { weir: null, browser: null, page: null };
	ui.stop = async () => {
		if (ui.browser)
			await ui.browser.close();
		if (ui.weir)
			await ui.weir.stop();
	};
	try {
		ui.weir = await startWeir(opts);
		({ browser: ui.browser, page: ui.page } = await openBrowser(ui.weir));
		if (loggedIn)
			await login(ui.page, ui.weir);
	} catch (e) {
		await ui.stop();
		throw e;
	}
	return ui;
}

// Registers node:test's before and after hooks where it is called (a file or a describe()):
// before resolves start() (startUi() unless given) and hands the ui to use(ui); after stops it.
export function withUi(use, start = () => startUi()) {
	let ui = null;
	before(async () => {
		ui = await start();
		use(ui);
	});
	after(async () => {
		if (ui)
			await ui.stop();
	});
}

// A server whose DAG folder (in a fresh temporary folder named after `prefix`) holds a copy of
// each of `files` and, from `extra`, more files by name and text, and `users` as startWeir's;
// waits until it lists `dagCount` DAGs (a broken file is an import error, not a DAG), then
// opens a browser and logs in as admin.  Resolves to { weir, browser, page, dir, dags, stop }; stop() closes both and removes the
// folder.
export async function startDagsUi(prefix, files, { extra = {}, dagCount = files.length, users } = {}) {
	const dir = mkdtempSync(join(tmpdir(), prefix));
	const dags = join(dir, 'dags');
	let ui = null;
	try {
		mkdirSync(dags);
		for (const f of files)
			copyFileSync(f, join(dags, f.split('/').pop()));
		for (const [name, text] of Object.entries(extra))
			writeFileSync(join(dags, name), text);
		ui = await startUi({ dags, users });
		await waitFor(async () => {
			const r = await ui.weir.api('GET', '/api/v1/dags');
			return r.body.dags && r.body.dags.length === dagCount;
		}, { timeout: 30000, what: `the server to read ${dagCount} DAG file(s)` });
		await login(ui.page, ui.weir);
	} catch (e) {
		if (ui)
			await ui.stop();
		rmSync(dir, { recursive: true, force: true });
		throw e;
	}
	const stopUi = ui.stop;
	return Object.assign(ui, {
		dir, dags, stop: async () => {
			await stopUi();
			rmSync(dir, { recursive: true, force: true });
		},
	});
}

// Saves SHOTS/NAME.png (the viewport: small files).
export async function screenshot(page, name) {
	mkdirSync(SHOTS, { recursive: true });
	const path = join(SHOTS, name + '.png');
	await page.screenshot({ path });
	return path;
}

// A native job spec: roles {name: {command, instances?, ...}}, each 1 vcore and 256m unless set.
export function jobSpec(roles, job = {}) {
	const out = { name: job.name || 'uitest', framework: job.framework || 'none', roles: {} };
	for (const [name, role] of Object.entries(roles)) out.roles[name] = { instances: 1, memory: '256m', vcores: 1, ...role };
	for (const [k, v] of Object.entries(job)) if (k !== 'name' && k !== 'framework') out[k] = v;
	return out;
}
