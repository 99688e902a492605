// Browser tests of the DAG pages against a real weir server running real DAG runs:
// the list (pause switch, import errors), the trigger form (conf validated, params typed),
// the grid turning green, a failing task's log, Clear, the graph against the DAG file, the
// Gantt and duration charts, marking a run failed, a page left before its data came, a page
// gone to while the login finishes, and the phone layout.
// Each test saves a screenshot under docs/ui/.

import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { REPO, login, openBrowser, screenshot, startDagsUi, waitFor, withUi } from './harness.mjs';

const HERE = join(REPO, 'tests', 'ui');
const EXAMPLE = join(REPO, 'examples', 'dags', 'two_models.yaml');

// Tasks and edges of a DAG file written as ours are ("- task_id: X", "depends_on: [a, b]"):
// what the graph must show, read from the file rather than from the server.
function graphOfFile(path) {
	const tasks = [];
	const edges = [];
	let cur = null;
	for (const line of readFileSync(path, 'utf8').split('\n')) {
		let m = /^\s*- task_id:\s*(\S+)/.exec(line);
		if (m) {
			cur = m[1];
			tasks.push(cur);
			continue;
		}
		m = /^\s*depends_on:\s*\[([^\]]*)\]/.exec(line);
		if (m && cur)
			for (const up of m[1].split(',').map((s) => s.trim()).filter(Boolean))
				edges.push([up, cur]);
	}
	return { tasks, edges };
}

const enc = encodeURIComponent;

describe('DAG pages', () => {
	let weir, page, dir, dags;

	withUi((ui) => ({ weir, page, dir, dags } = ui), () =>
		startDagsUi('weir-ui-dags-', [join(HERE, 'dags', 'ui_pipeline.yaml'), EXAMPLE], {
			extra: { 'broken.yaml': 'dag_id: broken\ntasks:\n  - task_id: a\n    comand: x\n' },
			dagCount: 2,
		}));

	const runsOf = async (dagId) =>
		(await weir.api('GET', `/api/v1/dags/${dagId}/dagRuns?order_by=-execution_date`)).body.dag_runs;
	const runState = async (dagId, runId) =>
		(await weir.api('GET', `/api/v1/dags/${dagId}/dagRuns/${enc(runId)}`)).body.state;

	test('the list shows the DAGs, a pause switch and import errors with file and line', async () => {
		await page.goto(weir.url + '/#/dags');
		const row = page.getByTestId('dag-row-ui_pipeline');
		await row.waitFor();
		await page.getByTestId('dag-row-two_models').waitFor();
		const err = page.getByTestId('import-error');
		await err.waitFor();
		assert.match(await err.innerText(), /^broken\.yaml:4 tasks\[0\]\.comand: unknown key/);
		assert.equal(await err.locator('code').getAttribute('title'), join(dags, 'broken.yaml'));
		const sw = page.getByTestId('pause-two_models');
		assert.equal(await sw.isChecked(), false);
		await sw.click();
		await waitFor(async () => (await weir.api('GET', '/api/v1/dags/two_models')).body.is_paused === true,
			{ what: 'two_models paused through the switch' });
		await sw.click();
		await waitFor(async () => (await weir.api('GET', '/api/v1/dags/two_models')).body.is_paused === false,
			{ what: 'two_models unpaused through the switch' });
		await screenshot(page, 'dags-list');
	});

	test('trigger from the form with conf: the conf is checked, the cells turn green', async () => {
		const marker = join(dir, 'ok-marker');
		writeFileSync(marker, 'x');
		await page.goto(weir.url + '/#/dags/ui_pipeline');
		await page.getByTestId('trigger-button').click();
		const dlg = page.getByTestId('trigger-dialog');
		await dlg.waitFor();
		// typed inputs, one per param, labelled
		assert.equal(await page.getByLabel('count').getAttribute('type'), 'number');
		assert.equal(await page.getByLabel('loud').getAttribute('type'), 'checkbox');
		const conf = page.getByTestId('trigger-conf');
		const error = page.getByTestId('trigger-error');
		await conf.fill('{"greeting": ');
		await page.getByTestId('trigger-submit').click();
		await error.waitFor();
		assert.match(await error.innerText(), /not valid JSON/);
		await conf.fill('[1, 2]');
		await page.getByTestId('trigger-submit').click();
		assert.match(await error.innerText(), /expected a JSON object/);
		assert.equal((await runsOf('ui_pipeline')).length, 0, 'nothing sent while the conf is wrong');
		// the fields and the editor stay in step
		await conf.fill('{"count": 5}');
		assert.equal(await page.getByLabel('count').inputValue(), '5');
		await page.getByLabel('greeting').fill('from the form');
		await page.getByLabel('loud').check();
		await screenshot(page, 'dag-trigger');
		await page.getByLabel('marker').fill(marker);
		const sent = JSON.parse(await conf.inputValue());
		assert.deepEqual(sent, { count: 5, greeting: 'from the form', marker, loud: true });
		await page.getByTestId('trigger-submit').click();
		await dlg.waitFor({ state: 'detached' });

		const runs = await waitFor(async () => {
			const r = await runsOf('ui_pipeline');
			return r.length === 1 && r;
		}, { what: 'the triggered run' });
		const run = runs[0];
		assert.deepEqual(run.conf, { count: 5, greeting: 'from the form', marker, loud: true });
		// every cell of the run's column turns green in the page (the page refreshes itself)
		const cells = page.locator(`[data-testid^="grid-cell-"][data-testid$="-${run.dag_run_id}"]`);
		await waitFor(async () => {
			const states = await cells.evaluateAll((els) => els.map((e) => e.dataset.state));
			return states.length === 4 && states.every((s) => s === 'success');
		}, { timeout: 60000, what: 'the four cells of the run green' });
		const colour = await page.getByTestId(`grid-cell-report-${run.dag_run_id}`)
			.evaluate((e) => getComputedStyle(e).backgroundColor);
		assert.equal(colour, 'rgb(0, 128, 0)');
		await page.getByTestId(`grid-run-${run.dag_run_id}`).and(page.locator('[data-state="success"]')).waitFor();
		// the conf typed in the form reached the task (its output, also shown in the panel)
		const ti = await weir.api('GET', `/api/v1/dags/ui_pipeline/dagRuns/${enc(run.dag_run_id)}` +
			'/taskInstances/report');
		assert.deepEqual(ti.body.outputs, { greeting: 'from the form' });
		await screenshot(page, 'dag-grid');
	});

	test('a failing task: its log in the panel, Clear, and the run succeeds', async () => {
		const marker = join(dir, 'late-marker');
		const r = await weir.api('POST', '/api/v1/dags/ui_pipeline/dagRuns', { conf: { marker } });
		assert.equal(r.status, 200, JSON.stringify(r.body));
		const runId = r.body.dag_run_id;
		await waitFor(async () => (await runState('ui_pipeline', runId)) === 'failed',
			{ timeout: 60000, what: 'the run to fail' });
		await page.goto(weir.url + '/#/dags/ui_pipeline');
		const cell = page.getByTestId(`grid-cell-check-${runId}`);
		await cell.and(page.locator('[data-state="failed"]')).waitFor();
		assert.equal(await page.getByTestId(`grid-cell-report-${runId}`).getAttribute('data-state'),
			'upstream_failed');
		await cell.click();
		const panel = page.getByTestId('ti-panel');
		await panel.getByTestId('log-text').filter({ hasText: 'boom: no marker' }).waitFor();
		assert.match(await panel.getByTestId('ti-command').innerText(), /test -f "\$WEIR_PARAM_marker"/);
		await panel.getByTestId('log-text').scrollIntoViewIfNeeded();
		await screenshot(page, 'dag-task-log');

		mkdirSync(dir, { recursive: true });
		writeFileSync(marker, 'x');
		await panel.getByTestId('clear-downstream').check();
		await panel.getByTestId('clear-only-failed').uncheck();
		await panel.getByTestId('clear-button').click();
		await page.getByTestId('confirm-ok').click();
		await waitFor(async () => (await runState('ui_pipeline', runId)) === 'success',
			{ timeout: 60000, what: 'the cleared run to succeed' });
		await page.getByTestId(`grid-run-${runId}`).and(page.locator('[data-state="success"]')).waitFor();
		// the panel stayed open through the refreshes and shows the second try
		await panel.getByTestId('try-tab-2').waitFor();
		await page.getByTestId(`grid-cell-report-${runId}`).and(page.locator('[data-state="success"]')).waitFor();
		await screenshot(page, 'dag-cleared');
	});

	test('the graph shows every task and edge of the example DAG', async () => {
		const want = graphOfFile(EXAMPLE);
		assert.ok(want.tasks.length >= 3 && want.edges.length >= 2, 'the example file was read');
		await page.goto(weir.url + '/#/dags/two_models?tab=graph');
		await page.getByTestId('dag-graph').waitFor();
		const nodes = page.locator('[data-testid^="graph-node-"]');
		const edges = page.locator('[data-testid^="graph-edge-"]');
		await waitFor(async () => (await edges.count()) === want.edges.length,
			{ what: `${want.edges.length} edges` });
		assert.equal(await nodes.count(), want.tasks.length);
		for (const t of want.tasks)
			assert.equal(await page.getByTestId(`graph-node-${t}`).count(), 1, `node ${t}`);
		for (const [a, b] of want.edges)
			assert.equal(await page.getByTestId(`graph-edge-${a}-${b}`).count(), 1, `edge ${a} -> ${b}`);
		// left to right: each edge goes from a column to one further right
		for (const [a, b] of want.edges) {
			const xa = (await page.getByTestId(`graph-node-${a}`).boundingBox()).x;
			const xb = (await page.getByTestId(`graph-node-${b}`).boundingBox()).x;
			assert.ok(xa < xb, `${a} left of ${b}`);
		}
		// the foreach task is one node with a count badge
		assert.equal(await page.locator('[data-testid="graph-node-train"] .dag-node-badge').count(), 1);

		// our pipeline coloured by its last run (success): nodes green
		const mine = graphOfFile(join(HERE, 'dags', 'ui_pipeline.yaml'));
		await page.goto(weir.url + '/#/dags/ui_pipeline?tab=graph');
		await page.getByTestId('graph-node-report').and(page.locator('[data-state="success"]')).waitFor();
		assert.equal(await page.locator('[data-testid^="graph-edge-"]').count(), mine.edges.length);
		await screenshot(page, 'dag-graph');
	});

	test('Gantt and durations draw bars; a run marked failed turns red', async () => {
		await page.goto(weir.url + '/#/dags/ui_pipeline?tab=gantt');
		await page.getByTestId('dag-gantt').waitFor();
		// prepare, fan[0], fan[1], check, report: one running bar each
		await waitFor(async () => (await page.locator('[data-testid^="gantt-bar-"]').count()) === 5,
			{ what: 'five Gantt bars' });
		const w = (await page.getByTestId('gantt-bar-prepare').boundingBox()).width;
		assert.ok(w >= 1, 'a bar has a width');
		assert.match(await page.getByTestId('gantt-row-prepare').locator('title').textContent(),
			/prepare: success[\s\S]*started/);
		await screenshot(page, 'dag-gantt');

		await page.getByTestId('tab-durations').click();
		await page.getByTestId('dag-durations').waitFor();
		const runs = await runsOf('ui_pipeline');
		assert.equal(await page.locator('[data-testid^="duration-bar-"]').count(), runs.length);
		assert.match(await page.getByTestId('duration-counts').innerText(), /2 successful, 0 failed/);
		await screenshot(page, 'dag-durations');

		// mark the first run failed from its panel
		const first = runs[runs.length - 1].dag_run_id;
		await page.getByTestId('tab-grid').click();
		await page.getByTestId(`grid-run-${first}`).click();
		await page.getByTestId('mark-failed').click();
		await page.getByTestId('confirm-ok').click();
		await page.getByTestId(`grid-run-${first}`).and(page.locator('[data-state="failed"]')).waitFor();
		assert.equal(await runState('ui_pipeline', first), 'failed');
		assert.deepEqual(page.errors.filter((e) => e.startsWith('pageerror')), [], 'no page errors');
	});

	test('a page left before its data came draws nothing beside the next one', async () => {
		// the first page's question about the user's rights is held until the second page
		// is drawn: the first render then goes on, into a slot no longer in the page
		let release, asked;
		const held = new Promise((r) => (release = r));
		const reached = new Promise((r) => (asked = r));
		const me = /\/api\/v1\/ui\/me\?dag_id=ui_pipeline/;
		await page.route(me, async (route) => {
			asked();
			await held;
			await route.continue();
		});
		try {
			await page.goto(weir.url + '/#/jobs');
			await page.evaluate(() => (location.hash = '#/dags/ui_pipeline'));
			await reached;
			await page.evaluate(() => (location.hash = '#/dags/two_models'));
			await page.locator('[data-testid="dag-view"][data-ready="grid"]').waitFor();
			const stale = page.waitForRequest(/\/api\/v1\/dags\/ui_pipeline\/details/);
			release();
			await stale;	// the first render has drawn its page and asked for its data
			assert.equal(await page.locator('.dag-page').count(), 1);
			assert.equal(await page.getByTestId('dag-title').innerText(), 'two_models');
		} finally {
			release();
			await page.unroute(me);
		}
	});

	test('a page gone to while the login finishes is not left for the jobs list', async () => {
		// the login's question about the user's rights is held until the reader has gone to
		// a DAG page: the login must not then move the reader to the jobs list
		const { browser: b3, page: p3 } = await openBrowser(weir);
		let release, asked;
		const held = new Promise((r) => (release = r));
		const reached = new Promise((r) => (asked = r));
		const me = /\/api\/v1\/ui\/me$/;
		try {
			await p3.route(me, async (route) => {
				asked();
				await held;
				await route.continue();
			});
			await p3.goto(weir.url + '/#/login');
			await p3.getByTestId('login-user').fill(weir.user);
			await p3.getByTestId('login-password').fill(weir.password);
			await p3.getByTestId('login-submit').click();
			await reached;
			await p3.evaluate(() => (location.hash = '#/dags/ui_pipeline'));
			await p3.getByTestId('dag-title').waitFor();
			const done = p3.waitForResponse(me);
			release();
			await done;	// the login has its answer and goes on
			await p3.getByTestId('session-user').filter({ hasText: weir.user }).waitFor();
			assert.match(await p3.evaluate(() => location.hash), /^#\/dags\/ui_pipeline/);
			assert.equal(await p3.getByTestId('jobs-page').count(), 0);
		} finally {
			release();
			await b3.close();
		}
	});

	test('the DAG page fits a phone', async () => {
		const { browser: b2, page: phone } = await openBrowser(weir, { width: 375, height: 740 });
		try {
			await login(phone, weir);
			await phone.goto(weir.url + '/#/dags/ui_pipeline');
			await phone.getByTestId('dag-grid').waitFor();
			const over = await phone.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
			assert.ok(over <= 1, `the page scrolls sideways by ${over} px`);
			await phone.getByTestId('trigger-button').waitFor();
			assert.ok(await phone.getByTestId('trigger-button').isVisible());
			await phone.getByTestId('grid-cell-check-' + (await runsOf('ui_pipeline'))[0].dag_run_id).click();
			await phone.getByTestId('ti-panel').getByTestId('log-text').waitFor();
			const over2 = await phone.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
			assert.ok(over2 <= 1, `with the panel open the page scrolls sideways by ${over2} px`);
			await screenshot(phone, 'dag-page-phone');
		} finally {
			await b2.close();
		}
	});
});
