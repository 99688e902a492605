#!/usr/bin/env node
// The web UI in the test browser at issue 4's sizes, against a real weir server:
//  1. a DAG of 50 tasks with 100 finished runs: time from navigation (a fresh page load) to the
//     grid's 5,000 cells drawn, with 100 runs shown; and the graph tab;
//  2. a job of 64 tasks: time from navigation to its task table's 64 rows;
//  3. a 100 MB log that keeps growing: time to its tail on screen, then, while it is followed
//     and the reader scrolls up through earlier pieces, the longest main-thread task and the
//     longest gap between animation frames (a requestAnimationFrame probe).
// The runs are written into the server's SQLite store (finished runs in mixed states with their
// task instances), as bench/ui_grid.py does, so the figure is the page's and not the time to
// run 5,000 jobs. Needs tests/ui's node_modules (npm ci there) and Debian's chromium.
//
//   WEIR_BIN=build/weir node bench/ui_render.mjs [--loads 5]

import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { login, openBrowser, startWeir, waitFor } from '../tests/ui/harness.mjs';

const LOADS = Number((process.argv.join(' ').match(/--loads[= ](\d+)/) || [])[1] || 5);
const N_RUNS = 100, N_TASKS = 50, JOB_TASKS = 64, LOG_BYTES = 100 * 1000 * 1000;

const median = (a) => a.slice().sort((x, y) => x - y)[Math.floor(a.length / 2)];
const f1 = (x) => x.toFixed(1);

function dagFile() {
	let s = 'dag_id: render_bench\ndescription: 50 tasks in 5 chains of 10\ntasks:\n';
	for (let t = 0; t < N_TASKS; t++) {
		s += `  - task_id: t${String(t).padStart(3, '0')}\n    command: "true"\n`;
		if (t >= 5)
			s += `    depends_on: [t${String(t - 5).padStart(3, '0')}]\n`;
	}
	return s;
}

// 100 finished runs, one an hour, most successful, every 7th failed with mixed task states.
function runsSql(dagId) {
	const states = ['success', 'success', 'success', 'failed', 'upstream_failed', 'skipped'];
	const now = Date.now();
	const q = (s) => `'${s}'`;
	const lines = ['.timeout 30000', 'BEGIN;'];
	for (let r = 0; r < N_RUNS; r++) {
		const runId = `bench_${String(r).padStart(4, '0')}`;
		const start = now - (N_RUNS - r) * 3600000;
		const end = start + 60000 + r * 300;
		const bad = r % 7 === 0;
		lines.push('INSERT INTO dag_runs (dag_id, run_id, state, run_type, logical_date, conf, ' +
			'reason, queued_at, start_date, end_date) VALUES (' + [q(dagId), q(runId),
			q(bad ? 'failed' : 'success'), q('manual'), start, q('{}'), q(''), start, start,
			end].join(',') + ');');
		for (let t = 0; t < N_TASKS; t++) {
			const ts = start + Math.floor(t / 5) * 5000 + (t % 5) * 200;
			lines.push('INSERT INTO task_instances (dag_id, run_id, task_id, map_index, state, ' +
				'try_number, max_tries, pool, pool_slots, priority, queued_at, start_date, ' +
				'end_date, rendered_command, outputs, reason) VALUES (' + [q(dagId), q(runId),
				q('t' + String(t).padStart(3, '0')), -1,
				q(bad ? states[(r + t) % states.length] : 'success'), 1, 1, q('default_pool'), 1,
				0, ts, ts + 800, ts + 4500, q('true'), 'NULL', q('')].join(',') + ');');
		}
	}
	lines.push('COMMIT;');
	return lines.join('\n') + '\n';
}

// A fresh page load of url; resolves with performance.now() at the first animation frame where
// ready() (evaluated in the page) holds: the time from navigation to drawn.
async function timeLoad(page, url, ready, arg) {
	await page.goto('about:blank');
	await page.goto(url);
	try {
		const h = await page.waitForFunction(ready, arg, { polling: 'raf', timeout: 60000 });
		return await h.jsonValue();
	} catch (e) {
		throw new Error(`${url} not drawn: ${e.message}; the page shows: ` +
			(await page.locator('main').innerText()).slice(0, 500) + '\n' + page.errors.join('\n'));
	}
}

async function main() {
	const dir = mkdtempSync(join(tmpdir(), 'weir-ui-bench-'));
	const dags = join(dir, 'dags');
	mkdirSync(dags);
	writeFileSync(join(dags, 'render_bench.yaml'), dagFile());
	const weir = await startWeir({ dags, base: 'resources:\n  vcores: 80\n  memory: 64g\n  gpus: 0\n' +
		'kill_grace_seconds: 2\n' });
	let browser;
	try {
		await waitFor(async () => (await weir.api('GET', '/api/v1/dags/render_bench')).status === 200,
			{ what: 'the DAG loaded' });
		const sql = spawnSync('sqlite3', [join(weir.home, 'weir.db')], { input: runsSql('render_bench'),
			encoding: 'utf8' });
		if (sql.status !== 0)
			throw new Error('sqlite3: ' + sql.stderr);
		const grid = await weir.api('GET', '/api/v1/ui/dags/render_bench/grid?limit=100');
		if (grid.body.runs.length !== N_RUNS)
			throw new Error('the grid has ' + grid.body.runs.length + ' runs');

		// the 64-task job and the growing 100 MB log, started now so they run while we measure
		const job = await weir.submit({ name: 'render-bench', framework: 'none', roles: {
			worker: { instances: JOB_TASKS, memory: '64m', vcores: 1, command: 'sleep 300' } } });
		const logJob = await weir.submit({ name: 'big-log', framework: 'none', roles: {
			main: { instances: 1, memory: '256m', vcores: 1, command:
				`yes 'log line: the quick brown fox jumps over the lazy dog 0123456789 abcdefghij' ` +
				`| head -c ${LOG_BYTES}; i=0; while [ $i -lt 3000 ]; do echo "tick $i"; ` +
				'i=$((i+1)); sleep 0.05; done' } } });

		const opened = await openBrowser(weir);
		browser = opened.browser;
		const page = opened.page;
		page.on('response', (r) => {
			if (r.status() >= 400)
				page.errors.push(`HTTP ${r.status()} ${r.url()}`);
		});
		page.on('requestfailed', (r) => page.errors.push(`failed ${r.url()} ${r.failure().errorText}`));
		await login(page, weir);

		// 1. the grid, 100 runs x 50 tasks
		const gridUrl = weir.url + '/#/dags/render_bench?limit=100';
		const gridReady = (n) => {
			const v = document.querySelector('[data-testid="dag-view"]');
			return v && v.dataset.ready === 'grid' &&
				document.querySelectorAll('.dag-grid .dag-cell').length === n && performance.now();
		};
		const gridTimes = [];
		for (let i = 0; i < LOADS; i++)
			gridTimes.push(await timeLoad(page, gridUrl, gridReady, N_RUNS * N_TASKS));
		const graphReady = (n) => document.querySelectorAll('[data-testid^="graph-node-"]').length === n &&
			performance.now();
		const graphTimes = [];
		for (let i = 0; i < LOADS; i++)
			graphTimes.push(await timeLoad(page, weir.url + '/#/dags/render_bench?tab=graph&limit=100',
				graphReady, N_TASKS));

		// 2. the job's task table
		await waitFor(async () => (await weir.job(job.id)).state === 'running',
			{ timeout: 120000, what: 'the 64-task job running' });
		const jobReady = (n) => {
			const t = document.querySelector('[data-testid="tasks-table"] tbody');
			return t && t.children.length === n && performance.now();
		};
		const jobTimes = [];
		for (let i = 0; i < LOADS; i++)
			jobTimes.push(await timeLoad(page, weir.url + `/#/jobs/${job.id}`, jobReady, JOB_TASKS));

		// 3. the 100 MB log, growing
		const logPath = async () => {
			const r = await weir.api('GET', `/api/v1/jobs/${logJob.id}/tasks/main/0/logs?offset=-1&length=1`);
			return Number(r.headers.get('x-weir-log-size') || 0);
		};
		await waitFor(async () => (await logPath()) >= LOG_BYTES, { timeout: 120000, interval: 500,
			what: 'the log past 100 MB' });
		await page.goto('about:blank');
		await page.goto(weir.url + `/#/jobs/${logJob.id}`);
		await page.getByTestId('task-log-main-0').waitFor();
		await page.evaluate(() => {
			// the probe: the longest gap between frames, and long tasks as Chromium reports them
			window.__probe = { maxGap: 0, longest: 0, longTasks: 0, frames: 0 };
			let last = performance.now();
			const frame = (t) => {
				window.__probe.maxGap = Math.max(window.__probe.maxGap, t - last);
				window.__probe.frames++;
				last = t;
				requestAnimationFrame(frame);
			};
			requestAnimationFrame(frame);
			new PerformanceObserver((l) => {
				for (const e of l.getEntries()) {
					window.__probe.longTasks++;
					window.__probe.longest = Math.max(window.__probe.longest, e.duration);
				}
			}).observe({ type: 'longtask', buffered: false });
		});
		const t0 = await page.evaluate(() => performance.now());
		await page.getByTestId('task-log-main-0').click();
		const shown = await (await page.waitForFunction(() => {
			const p = document.querySelector('[data-testid="log-text"]');
			return p && p.textContent.length > 1000 && performance.now();
		}, null, { polling: 'raf', timeout: 60000 })).jsonValue();
		// each phase's worst: following the growing end, scrolling up through 10 earlier
		// pieces, searching what is loaded
		const take = () => page.evaluate(() => {
			const p = window.__probe;
			window.__probe = { maxGap: 0, longest: 0, longTasks: 0, frames: 0 };
			return p;
		});
		await page.waitForTimeout(5000);
		const follow = await take();
		const scroller = page.locator('.log-scroll');
		for (let i = 0; i < 10; i++) {
			await scroller.evaluate((e) => { e.scrollTop = 0; });
			await page.waitForTimeout(400);
		}
		const scroll = await take();
		await page.getByTestId('log-search').fill('tick');
		await page.getByTestId('log-search').press('Enter');
		await page.waitForTimeout(2000);
		const search = await take();
		const status = await page.getByTestId('log-status').innerText();
		const size = await logPath();

		const out = [
			`grid, ${N_RUNS} runs x ${N_TASKS} tasks (${N_RUNS * N_TASKS} cells), navigation to drawn: ` +
				`median ${f1(median(gridTimes))} ms, worst ${f1(Math.max(...gridTimes))} ms (${LOADS} loads)`,
			`graph, ${N_TASKS} tasks: median ${f1(median(graphTimes))} ms, worst ${f1(Math.max(...graphTimes))} ms`,
			`job page, ${JOB_TASKS} tasks: median ${f1(median(jobTimes))} ms, worst ${f1(Math.max(...jobTimes))} ms`,
			`log of ${(size / 1e6).toFixed(1)} MB, growing: tail on screen ${f1(shown - t0)} ms after ` +
				`the click; viewer at the end: ${status}`,
			...[['opening + following 5 s', follow], ['scrolling up 10 pieces', scroll],
				['searching what is loaded', search]].map(([what, p]) =>
				`  ${what}: longest frame gap ${f1(p.maxGap)} ms, ${p.longTasks} long tasks ` +
				`(longest ${f1(p.longest)} ms), ${p.frames} frames`),
		];
		console.log(out.join('\n'));
		await weir.api('DELETE', `/api/v1/jobs/${job.id}`);
		await weir.api('DELETE', `/api/v1/jobs/${logJob.id}`);
	} finally {
		if (browser)
			await browser.close();
		await weir.stop();
		rmSync(dir, { recursive: true, force: true });
	}
}

main().catch((e) => {
	console.error(e);
	process.exit(1);
});
