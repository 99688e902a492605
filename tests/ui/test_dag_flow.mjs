// Browser tests of a run's flow in the DAG pages: the branch task marked on the graph, the
// branch not chosen shown skipped in the graph and the grid, and a task mapped over an
// upstream's output showing its instances by map_index in the task panel.

import { before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { REPO, screenshot, startDagsUi, waitFor, withUi } from './harness.mjs';

describe('branches and mapped instances in the DAG pages', () => {
	let weir, page;
	const runId = 'flow1';

	withUi((ui) => ({ weir, page } = ui),
		() => startDagsUi('weir-ui-flow-', [join(REPO, 'tests', 'ui', 'dags', 'ui_flow.yaml')]));

	before(async () => {
		const run = await weir.api('POST', '/api/v1/dags/ui_flow/dagRuns', { dag_run_id: runId });
		assert.equal(run.status, 200, JSON.stringify(run.body));
		await waitFor(async () => {
			const r = await weir.api('GET', `/api/v1/dags/ui_flow/dagRuns/${runId}`);
			return r.body.state === 'success';
		}, { timeout: 60000, what: 'the run to succeed' });
	});

	test('the graph marks the branch and shows the path not chosen skipped', async () => {
		await page.goto(weir.url + '/#/dags/ui_flow?tab=graph');
		await page.getByTestId('dag-graph').waitFor();
		await page.getByTestId('graph-node-c').and(page.locator('[data-state="skipped"]')).waitFor();
		assert.equal(await page.getByTestId('graph-flow-choose').count(), 1);
		assert.equal(await page.getByTestId('graph-flow-b').count(), 0);
		const title = await page.getByTestId('graph-node-choose').getAttribute('aria-label');
		assert.match(title, /branch: chooses its downstream/);
		assert.equal(await page.getByTestId('graph-node-b').getAttribute('data-state'), 'success');
		assert.equal(await page.getByTestId('graph-node-join').getAttribute('data-state'), 'success');
		// the mapped task: one node, its count badge says 2
		assert.equal(await page.locator('[data-testid="graph-node-each"] .dag-node-badge text')
			.textContent(), '[2]');
		await screenshot(page, 'dag-branch-graph');
	});

	test('the grid shows the skip and the mapped instances by map_index', async () => {
		await page.goto(weir.url + '/#/dags/ui_flow?tab=grid');
		await page.getByTestId('dag-grid').waitFor();
		const cell = page.getByTestId(`grid-cell-c-${runId}`);
		await cell.and(page.locator('[data-state="skipped"]')).waitFor();
		await page.getByTestId(`grid-cell-each-${runId}`).click();
		const pick = page.getByTestId('ti-map-index');
		await pick.waitFor();
		assert.deepEqual(await pick.locator('option').allInnerTexts(),
			['[0] success', '[1] success']);
		await pick.selectOption('1');
		await waitFor(async () => (await page.getByTestId('ti-command').textContent()).includes('y'),
			{ what: 'instance 1 shown' });
		await screenshot(page, 'dag-mapped-instances');
	});
});
