// Browser tests of the trigger form against a DAG whose params have schemas: a select for an
// enum, a number input with the bounds, a checkbox for a boolean, the required param marked,
// the JSON editor kept in step, and the server's refusal of a conf that breaks a schema shown
// in the form with nothing stored.

import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { REPO, screenshot, startDagsUi, waitFor, withUi } from './harness.mjs';

describe('DAG params in the trigger form', () => {
	let weir, page;

	withUi((ui) => ({ weir, page } = ui),
		() => startDagsUi('weir-ui-params-', [join(REPO, 'tests', 'ui', 'dags', 'ui_params.yaml')]));

	const runsOf = async () =>
		(await weir.api('GET', '/api/v1/dags/ui_params/dagRuns')).body.dag_runs;

	test('the form follows the schema; a refused conf is shown and nothing is stored', async () => {
		await page.goto(weir.url + '/#/dags/ui_params');
		await page.getByTestId('trigger-button').click();
		await page.getByTestId('trigger-dialog').waitFor();

		const model = page.getByTestId('param-model');
		assert.equal(await model.evaluate((el) => el.tagName), 'SELECT');
		assert.deepEqual(await model.locator('option').allInnerTexts(), ['(choose)', 'als', 'bpr']);
		assert.equal(await model.getAttribute('required'), '');
		assert.ok(await page.getByTestId('param-model-required').isVisible());
		const epochs = page.getByTestId('param-epochs');
		assert.equal(await epochs.getAttribute('type'), 'number');
		assert.equal(await epochs.getAttribute('min'), '1');
		assert.equal(await epochs.getAttribute('max'), '10');
		assert.equal(await epochs.getAttribute('step'), '1');
		assert.equal(await page.getByTestId('param-epochs-required').count(), 0);
		assert.ok(await page.getByText('Epochs').isVisible(), 'the title labels the field');
		assert.equal(await page.getByTestId('param-shuffle').getAttribute('type'), 'checkbox');
		assert.ok(await page.getByTestId('param-shuffle').isChecked());

		// the JSON editor follows the select, and the select the editor
		const conf = page.getByTestId('trigger-conf');
		await model.selectOption({ label: 'bpr' });
		assert.equal(JSON.parse(await conf.inputValue()).model, 'bpr');
		await conf.fill('{"model": "als", "epochs": 12}');
		assert.equal(await model.inputValue(), '0');
		assert.equal(await epochs.inputValue(), '12');

		// the server checks the schema: refused, said in the form, nothing stored
		await page.getByTestId('trigger-submit').click();
		const error = page.getByTestId('trigger-error');
		await error.waitFor();
		assert.match(await error.innerText(), /params\.epochs: expected a number <= 10, got 12/);
		assert.equal((await runsOf()).length, 0);
		await screenshot(page, 'dag-trigger-params');

		await epochs.fill('4');
		assert.equal(JSON.parse(await conf.inputValue()).epochs, 4);
		await page.getByTestId('trigger-submit').click();
		await page.getByTestId('trigger-dialog').waitFor({ state: 'detached' });
		const runs = await waitFor(async () => {
			const r = await runsOf();
			return r.length === 1 && r;
		}, { what: 'the triggered run' });
		assert.deepEqual(runs[0].conf, { model: 'als', epochs: 4, shuffle: true, tag: 'nightly' });
	});
});
