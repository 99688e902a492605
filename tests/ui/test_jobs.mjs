// test_jobs.mjs: the jobs pages in a real browser against a real server: a job of two roles in
// the list and on its page (every task), a task's log growing while it runs, search in the log,
// and Kill through the button and its confirmation, after which every task has ended; a warm
// worker's calls.

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
	// two that end first, so that the list and its filter have something to tell apart
	const quick = await weir.submit(jobSpec({ worker: { command: 'echo done' } }, { name: 'ui-quick' }));
	const failing = await weir.submit(jobSpec({ worker: { command: 'exit 3' } }, { name: 'ui-fails' }));
	for (const j of [quick, failing]) {
		await waitFor(async () => ['succeeded', 'failed'].includes((await weir.job(j.id)).state), { what: `job ${j.id} to end` });
	}
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
	await waitFor(async () => /chief × 1/.test(await row.textContent()) && /worker × 2/.test(await row.textContent()),
		{ what: 'the roles column: chief × 1, worker × 2' });
	await screenshot(page, 'jobs-list');
	// a refresh (every 2 s) keeps the keyboard focus where it was
	const nameLink = page.getByTestId('job-row-' + job.id).getByRole('link', { name: 'ui-two-roles', exact: true });
	await nameLink.focus();
	const stamp = await page.getByTestId('jobs-updated').textContent();
	await waitFor(async () => (await page.getByTestId('jobs-updated').textContent()) !== stamp, { what: 'a refresh of the list' });
	assert.ok(await nameLink.evaluate((el) => el === document.activeElement), 'the focused link survived the refresh');

	await page.getByTestId('job-row-' + failing.id).getByText('failed').first().waitFor();
	assert.match(await page.getByTestId('job-row-' + failing.id).textContent(), /exited 3/);

	// the state filter: the succeeded view lists the quick job only
	await page.getByLabel('State', { exact: true }).selectOption('succeeded');
	await page.getByTestId('job-row-' + quick.id).waitFor();
	assert.equal(await page.getByTestId('job-row-' + job.id).count(), 0);
	assert.equal(await page.getByTestId('job-row-' + failing.id).count(), 0);
	assert.match(page.url(), /#\/jobs\?state=succeeded$/);
	await page.getByLabel('State', { exact: true }).selectOption('running');
	await page.getByTestId('job-row-' + job.id).waitFor();

	await page.getByTestId('job-row-' + job.id).getByRole('link', { name: 'ui-two-roles', exact: true }).click();
	await page.getByTestId('job-page').waitFor();
	for (const t of ['chief-0', 'worker-0', 'worker-1']) {
		const tr = page.getByTestId('task-row-' + t);
		await waitFor(async () => (await tr.getAttribute('data-state')) === 'running', { what: `task ${t} running` });
	}
	assert.equal(await page.getByTestId('tasks-table').locator('tbody tr').count(), 3);
	// the same on the job's page: focus on a Log button survives the refreshes
	const logBtn = page.getByTestId('task-log-worker-1');
	await logBtn.focus();
	const duration = page.locator('dl.facts div', { hasText: 'Duration' }).locator('dd');
	const d0 = await duration.textContent();
	await waitFor(async () => (await duration.textContent()) !== d0, { what: 'a refresh of the job page' });
	assert.ok(await logBtn.evaluate((el) => el === document.activeElement), 'the focused button survived the refresh');

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

// The first "line N" number in the loaded log text, or null.
async function firstLine() {
	const text = await page.getByTestId('log-text').textContent();
	const m = /^line (\d+)\n/.exec(text);
	return m ? Number(m[1]) : null;
}

const scroller = () => page.getByTestId('log-viewer').locator('.log-scroll');

test('a large log opens at its end, loads earlier pieces upward, keeps the reader\'s place', async () => {
	// about 1 MB at once (4 pieces and more), then a new line every 0.2 s
	const big = await weir.submit(jobSpec({ worker: {
		command: 'seq 1 90000 | sed "s/^/line /"; i=0; while [ $i -lt 900 ]; do i=$((i+1)); echo "tail $i"; sleep 0.2; done',
	} }, { name: 'ui-big-log' }));
	await waitFor(async () => {
		const r = await weir.api('GET', `/api/v1/jobs/${big.id}/tasks/worker/0/logs?offset=-16`);
		return r.status === 200 && /tail/.test(r.body);
	}, { what: 'the big log written' });
	await page.goto(`${weir.url}/#/jobs/${big.id}`);
	await page.getByTestId('log-text').getByText('line 90000').waitFor();
	// the end only, starting at a whole line
	const start = await firstLine();
	assert.ok(start > 60000, `the view opened near the end (first line ${start})`);
	await page.getByTestId('log-earlier').waitFor();

	// scrolled up a little: new lines arrive below, the view stays where the reader put it
	await scroller().evaluate((el) => (el.scrollTop = el.scrollHeight / 2));
	const top = await scroller().evaluate((el) => el.scrollTop);
	const len = (await page.getByTestId('log-text').textContent()).length;
	await waitFor(async () => (await page.getByTestId('log-text').textContent()).length > len + 20, { what: 'new lines' });
	assert.equal(await scroller().evaluate((el) => el.scrollTop), top);

	// at the top, earlier pieces come in above and the line read stays in view
	let first = start;
	for (let i = 0; i < 12 && first !== 1; i++) {
		await scroller().evaluate((el) => el.scrollTo(0, 0));
		const before = first;
		first = await waitFor(async () => {
			const f = await firstLine();
			return f !== null && f < before ? f : 0;
		}, { what: `lines before ${before}` });
		assert.ok(await scroller().evaluate((el) => el.scrollTop) > 0, 'the view did not jump to the new top');
	}
	assert.equal(first, 1, 'the whole file was reached');
	const text = await page.getByTestId('log-text').textContent();
	assert.match(text, /^line 1\nline 2\n/);
	assert.equal((text.match(/^line \d+$/gm) || []).length, 90000, 'every line once, none cut');
	await page.getByTestId('log-earlier').waitFor({ state: 'hidden' });

	// back at the bottom it follows again
	await scroller().evaluate((el) => (el.scrollTop = el.scrollHeight));
	const n = (await page.getByTestId('log-text').textContent()).length;
	await waitFor(async () => (await page.getByTestId('log-text').textContent()).length > n, { what: 'more lines' });
	await waitFor(() => scroller().evaluate((el) => el.scrollHeight - el.scrollTop - el.clientHeight < 24),
		{ what: 'the view to stay at the bottom' });

	// Download saves the whole file under the job's name
	const [download] = await Promise.all([page.waitForEvent('download'), page.getByTestId('log-download').click()]);
	assert.equal(download.suggestedFilename(), `job-${big.id}-worker-0.log`);
	assert.equal((await weir.api('DELETE', `/api/v1/jobs/${big.id}`)).status, 202);
	assert.deepEqual(page.errors, []);
});

test('a restarted job shows each attempt\'s tasks and logs; an unknown job says so', async () => {
	// attempt 1 exits 130 (retryable), attempt 2 succeeds
	const j = await weir.submit(jobSpec({ worker: {
		command: 'echo "attempt $WEIR_ATTEMPT"; [ "$WEIR_ATTEMPT" -ge 2 ] || exit 130',
	} }, { name: 'ui-restarted', restart: { max_restarts: 1 } }));
	await waitFor(async () => (await weir.job(j.id)).state === 'succeeded', { what: 'the job to succeed on attempt 2' });
	await page.goto(`${weir.url}/#/jobs/${j.id}`);
	await page.getByTestId('log-text').getByText('attempt 2').waitFor();
	const sel = page.getByLabel('Attempt', { exact: true });
	await sel.waitFor();
	await sel.selectOption('1');
	await waitFor(async () => (await page.getByTestId('task-row-worker-0').getAttribute('data-state')) === 'failed',
		{ what: 'attempt 1\'s task, failed' });
	assert.match(await page.getByTestId('task-row-worker-0').textContent(), /130/);
	await page.getByTestId('log-text').getByText('attempt 1').waitFor();
	assert.match(page.url(), /attempt=1/);

	await page.goto(`${weir.url}/#/jobs/987654`);
	await page.getByTestId('job-error').waitFor();
	assert.match(await page.getByTestId('job-error').textContent(), /987654|no such job|not found/i);
	page.errors.length = 0; // the 404 above is the point
});

test('a warm worker\'s page lists its calls, with their counts by state', async () => {
	// a job named as the Ray module names its workers, and calls recorded as its pool sends them
	const w = await weir.submit(jobSpec({ worker: { command: 'echo worker' } }, { name: 'warm-worker' }));
	const calls = [
		{ id: 1, name: 'square', state: 'succeeded', started_at: 1000, ended_at: 1002 },
		{ id: 2, name: 'square', state: 'failed', started_at: 2000, ended_at: 2005, error: 'KeyError' },
		{ id: 3, name: 'square', state: 'running', started_at: 3000 },
	];
	const r = await weir.api('POST', `/api/v1/jobs/${w.id}/calls`, { calls });
	assert.equal(r.status, 200, JSON.stringify(r.body));
	await page.goto(`${weir.url}/#/jobs/${w.id}`);
	const box = page.getByTestId('job-calls');
	await box.waitFor();
	assert.match(await page.getByTestId('job-calls-count').textContent(), /^3 calls: 1 running, 1 succeeded, 1 failed$/);
	const rows = box.locator('tbody tr');
	assert.equal(await rows.count(), 3);
	assert.equal(await rows.nth(1).getAttribute('data-state'), 'failed');
	assert.match(await rows.nth(1).textContent(), /square.*5 ms.*KeyError/);
	// a job of another name asks for no calls and shows none
	await page.goto(`${weir.url}/#/jobs/${job.id}`);
	await page.getByTestId('tasks-table').locator('tbody tr').first().waitFor();
	assert.equal(await page.getByTestId('job-calls').isHidden(), true);
});

test('the pages fit a phone screen and every control has a name', async () => {
	await page.setViewportSize({ width: 375, height: 800 });
	try {
		for (const where of ['/#/jobs', `/#/jobs/${job.id}`]) {
			await page.goto(weir.url + where);
			await page.getByTestId(where === '/#/jobs' ? 'jobs-table' : 'tasks-table').locator('tbody tr').first().waitFor();
			// the page does not scroll sideways (wide tables scroll inside their own box)
			assert.ok(await page.evaluate(() => document.documentElement.scrollWidth <= window.innerWidth + 1), where);
			const unnamed = await page.evaluate(() => [...document.querySelectorAll('button, input, select, a[href], textarea')]
				.filter((el) => el.offsetParent !== null)
				.filter((el) => {
					const name = el.getAttribute('aria-label') || (el.labels && el.labels.length && el.labels[0].textContent) ||
						el.textContent.trim() || el.getAttribute('title') || el.getAttribute('placeholder');
					return !name;
				}).map((el) => el.outerHTML.slice(0, 80)));
			assert.deepEqual(unnamed, [], `controls without a name on ${where}`);
		}
		await screenshot(page, 'job-page-phone');
	} finally {
		await page.setViewportSize({ width: 1280, height: 800 });
	}
});
