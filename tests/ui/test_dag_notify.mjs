// Browser test of a run's notifications and SLA misses in the DAG page's run panel, against
// a real weir server delivering to a real HTTP receiver (node's http server in this process):
// one delivery sent, one that the receiver refuses (recorded failed with its error), and a
// task that missed its SLA.

import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import { screenshot, startDagsUi, waitFor, withUi } from './harness.mjs';

describe('run panel: notifications and SLA misses', () => {
	let weir, page, hooks;
	const posts = [];

	// the receiver first (the DAG file names its port), then the server and the browser
	withUi((ui) => ({ weir, page } = ui), async () => {
		hooks = createServer((req, res) => {
			let body = '';
			req.on('data', (c) => (body += c));
			req.on('end', () => {
				posts.push({ path: req.url, body: JSON.parse(body) });
				res.statusCode = req.url === '/down' ? 500 : 200;
				res.end('ok');
			});
		});
		await new Promise((r) => hooks.listen(0, '127.0.0.1', r));
		const url = `http://127.0.0.1:${hooks.address().port}`;
		const alerts = JSON.stringify({
			dag_id: 'alerts',
			tasks: [
				{ task_id: 'slow', command: 'sleep 3', sla: { within: 1, from: 'run_start' },
					on_sla_miss: [{ webhook: { url: url + '/up' } }] },
				{ task_id: 'ok', command: 'true',
					on_success: [{ webhook: { url: url + '/down' }, retries: 0 }] },
			],
		});
		return startDagsUi('weir-ui-notify-', [], { extra: { 'alerts.yaml': alerts }, dagCount: 1 });
	});

	before(async () => {
		const r = await weir.api('POST', '/api/v1/dags/alerts/dagRuns', { dag_run_id: 'r1' });
		assert.equal(r.status, 200);
		await waitFor(async () => {
			const n = (await weir.api('GET', '/api/v1/dags/alerts/dagRuns/r1/notifications')).body;
			const run = (await weir.api('GET', '/api/v1/dags/alerts/dagRuns/r1')).body;
			return run.state === 'success' && n.notifications.length === 2 &&
				n.notifications.every((x) => x.state !== 'pending');
		}, { timeout: 60000, what: 'the run done and both deliveries settled' });
	});

	after(() => {
		if (hooks)
			hooks.close();
	});

	test('the run panel lists the SLA miss and both deliveries, the failed one with its error', async () => {
		await page.goto(weir.url + '/#/dags/alerts');
		await page.getByTestId('grid-run-r1').click();
		const misses = page.getByTestId('run-sla-misses');
		await misses.waitFor();
		assert.match(await page.getByTestId('sla-miss-slow').innerText(), /slow missed its SLA/);
		const table = page.getByTestId('run-notifications');
		await table.waitFor();
		const sent = table.locator('li[data-state="sent"]');
		const failed = table.locator('li[data-state="failed"]');
		assert.equal(await sent.count(), 1);
		assert.equal(await failed.count(), 1);
		assert.match(await sent.innerText(), /slow[\s\S]*sla miss/);
		assert.match(await failed.innerText(), /ok[\s\S]*task success[\s\S]*HTTP 500/);
		// the target is masked: no path of the webhook's URL
		assert.doesNotMatch(await table.innerText(), /\/down|\/up/);
		await screenshot(page, 'dag-run-notifications');

		// the task instance's panel says it missed its SLA
		await page.getByTestId('grid-cell-slow-r1').click();
		await page.getByTestId('ti-panel-title').filter({ hasText: 'slow' }).waitFor();
		await waitFor(async () => /missed \(due/.test(await page.getByTestId('ti-panel').innerText()),
			{ what: 'the SLA line' });
		assert.equal(posts.filter((p) => p.body.event === 'sla_miss').length, 1);
		assert.deepEqual(page.errors.filter((e) => e.startsWith('pageerror')), [], 'no page errors');
	});
});
