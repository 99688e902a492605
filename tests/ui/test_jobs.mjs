// test_jobs.mjs: the jobs pages in a real browser against a real server: a job of two roles in
// the list and on its page (every task), a task's log growing while it runs, search in the log,
// and Kill through the button and its confirmation, after which every task has ended.

import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { jobSpec, login, openBrowser, screenshot, startWeir, waitFor } from './harness.mjs';

let weir;
let browser;
let page;
let job;

before(async () => {
	weir = await startWeir();
	({ browser, page } = await openBrowser(weir));
	await login(page, weir);
});

after(async () => {
	if (browser) await browser.close();
	if (weir) await weir.stop();
});

// The number in the last "chief line N" the log shows, or 0.
async function lastChiefLine() {
	const text = await page.getByTestId('log-text').textContent();
	const all = [...text.matchAll(/chief line (\d+)/g)];
	return all.length ? Number(all[all.length - 1][1]) : 0;
}

test('the list shows a two-role job, its page every task and the live log of one', async () => {
	// chief prints a line every 0.2 s for two minutes; the workers just wait
	job = await weir.submit(jobSpec({
		chief: { command: 'i=0; while [ $i -lt 600 ]; do i=$((i+1)); echo "chief line $i"; sleep 0.2; done' },
		worker: { instances: 2, command: 'sleep 300' },
	}, { name: 'ui-two-roles' }));

	await page.goto(weir.url + '/#/jobs');
	const row = page.getByTestId('job-row-' + job.id);
	await row.waitFor();
	assert.match(await row.textContent(), /ui-two-roles/);
	await waitFor(async () => (await row.getAttribute('data-state')) === 'running', { what: 'the row to say running' });
	// the roles and their instances, where the list route gives them (its `roles` field)
	const listed = (await weir.api('GET', '/api/v1/jobs')).body.jobs.find((j) => j.id === job.id);
	if (listed.roles) await waitFor(async () => /chief × 1/.test(await row.textContent()) && /worker × 2/.test(await row.textContent()),
		{ what: 'the roles column: chief × 1, worker × 2' });
	await screenshot(page, 'jobs-list');

	// the state filter: a finished-jobs view does not list the running job
	await page.getByLabel('State', { exact: true }).selectOption('succeeded');
	await page.getByTestId('jobs-empty').waitFor();
	assert.equal(await page.getByTestId('job-row-' + job.id).count(), 0);
	await page.getByLabel('State', { exact: true }).selectOption('running');
	await page.getByTestId('job-row-' + job.id).waitFor();

	await page.getByTestId('job-row-' + job.id).getByRole('link', { name: 'ui-two-roles', exact: true }).click();
	await page.getByTestId('job-page').waitFor();
	for (const t of ['chief-0', 'worker-0', 'worker-1']) {
		const tr = page.getByTestId('task-row-' + t);
		await waitFor(async () => (await tr.getAttribute('data-state')) === 'running', { what: `task ${t} running` });
	}
	assert.equal(await page.getByTestId('tasks-table').locator('tbody tr').count(), 3);

	// the chief's log, shown first, grows while the job runs
	await page.getByTestId('task-log-chief-0').click();
	const first = await waitFor(lastChiefLine, { what: 'a chief line in the log' });
	const later = await waitFor(async () => {
		const n = await lastChiefLine();
		return n > first + 5 ? n : 0;
	}, { what: `the log to grow past line ${first + 5}` });
	assert.equal((await weir.job(job.id)).state, 'running', 'the log grew while the job ran');
	assert.ok(later > first);
	assert.match(await page.getByTestId('log-title').textContent(), /chief:0/);

	// search finds what is loaded; the download link asks for an attachment
	await page.getByTestId('log-search').fill('chief line 3');
	await page.getByTestId('log-search').press('Enter');
	await waitFor(async () => /^\d+ of \d+$/.test(await page.getByTestId('log-search-count').textContent()),
		{ what: 'the search count' });
	assert.match(await page.getByTestId('log-download').getAttribute('href'), /download=1/);
	await screenshot(page, 'job-page');
	assert.deepEqual(page.errors, []);
});

test('Kill asks for confirmation, then every task ends killed', async () => {
	assert.ok(job, 'the previous test submitted the job');
	await page.getByTestId('kill-job').click();
	const dialog = page.getByTestId('confirm-dialog');
	await dialog.waitFor();
	assert.match(await dialog.textContent(), /Kill job/);
	// Cancel keeps it running
	await page.getByTestId('confirm-cancel').click();
	await dialog.waitFor({ state: 'detached' });
	assert.equal((await weir.job(job.id)).state, 'running');

	await page.getByTestId('kill-job').click();
	await dialog.waitFor();
	await screenshot(page, 'job-kill-confirm');
	await page.getByTestId('confirm-ok').click();
	for (const t of ['chief-0', 'worker-0', 'worker-1']) {
		const tr = page.getByTestId('task-row-' + t);
		await waitFor(async () => (await tr.getAttribute('data-state')) === 'killed', { what: `task ${t} killed on the page` });
	}
	await page.getByTestId('job-state').getByText('killed').waitFor();
	await page.getByTestId('kill-job').waitFor({ state: 'hidden' });
	const tasks = (await weir.api('GET', `/api/v1/jobs/${job.id}/tasks`)).body.tasks;
	assert.equal(tasks.length, 3);
	for (const t of tasks) assert.ok(t.ended_at, `${t.role}:${t.index} has ended`);
	assert.match(await page.getByTestId('job-events').textContent(), /kill/i);
	await screenshot(page, 'job-killed');
	assert.deepEqual(page.errors, []);
});
