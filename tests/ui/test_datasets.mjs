// Browser tests of the Datasets page: each dataset with the task that updates it and the DAG
// it triggers, what is queued for that DAG after one of its two datasets was updated, an update
// announced from the page's form starting the DAG's run, and the events with their runs.

import { before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { REPO, screenshot, startDagsUi, waitFor, withUi } from './harness.mjs';

describe('the Datasets page', () => {
	let weir, page;

	withUi((ui) => ({ weir, page } = ui), () => startDagsUi('weir-ui-datasets-',
		['ui_ds_producer.yaml', 'ui_ds_consumer.yaml'].map((f) => join(REPO, 'tests', 'ui', 'dags', f))));

	before(async () => {
		await waitFor(async () => {
			const r = await weir.api('GET', '/api/v1/datasets');
			return r.body.datasets && r.body.datasets.length === 2;
		}, { timeout: 30000, what: 'the server to read the DAG files\' datasets' });
	});

	const runsOf = async () =>
		(await weir.api('GET', '/api/v1/dags/ui_ds_consumer/dagRuns')).body.dag_runs;

	test('datasets, what updates them, what they trigger, and an announced update', async () => {
		// one of the two datasets updated by the producer's task
		const r = await weir.api('POST', '/api/v1/dags/ui_ds_producer/dagRuns', { dag_run_id: 'p1' });
		assert.equal(r.status, 200);
		await waitFor(async () => (await weir.api('GET',
			'/api/v1/dags/ui_ds_producer/dagRuns/p1')).body.state === 'success',
		{ what: 'the producer run' });

		await page.goto(weir.url + '/#/datasets');
		await page.getByTestId('nav-datasets').waitFor();
		const orders = page.getByTestId('ds-row-s3://ui/orders');
		await orders.waitFor();
		const text = await orders.innerText();
		assert.match(text, /ui_ds_producer/);
		assert.match(text, /make/);
		await waitFor(async () => /1 of 2 updated/.test(await orders.innerText()),
			{ what: 'the consumer 1 of 2 queued' });
		const customers = page.getByTestId('ds-row-s3://ui/customers');
		assert.match(await customers.innerText(), /none \(outside updates only\)/);
		await screenshot(page, 'datasets-queued');

		// the other announced from the form: the consumer runs, and the event says so
		await page.getByTestId('ds-announce-uri').selectOption('s3://ui/customers');
		await page.getByTestId('ds-announce-extra').fill('{"rows": 12}');
		await page.getByTestId('ds-announce').click();
		await waitFor(async () => (await runsOf()).length === 1, { what: 'the consumer run' });
		const events = page.getByTestId('ds-events');
		await waitFor(async () => /ui_ds_consumer/.test(await events.innerText()),
			{ what: 'the event with its run', timeout: 15000 });
		assert.match(await events.innerText(), /announced over REST/);
		assert.match(await events.innerText(), /"rows":12/);
		await waitFor(async () => /0 of 2 updated/.test(await orders.innerText()),
			{ what: 'the queue consumed' });
		await screenshot(page, 'datasets-events');
	});
});
