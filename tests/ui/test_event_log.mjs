// test_event_log.mjs: the event log page in a real browser against a real server: a
// connection added with the token and the browser's own login listed with who, from where and
// what, the password's value nowhere on the page, and the filter by event.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { login, screenshot, withUi, waitFor } from './harness.mjs';

const SECRET = 'pw-not-on-the-page-7731';
let weir, page;
withUi((ui) => ({ weir, page } = ui));

test('the event log lists who did what, and filters by event', async () => {
	const r = await weir.api('POST', '/api/v1/connections',
		{ connection_id: 'warehouse', conn_type: 'postgres', login: 'etl', password: SECRET });
	assert.equal(r.status, 200, JSON.stringify(r.body));
	await login(page, weir);
	await page.goto(weir.url + '/#/events');
	await page.getByTestId('events-table').waitFor();
	const rows = page.locator('[data-testid^="event-row-"]');
	await waitFor(async () => (await rows.count()) >= 2, { what: 'two records' });
	// newest first: the browser's login, then the connection
	const first = await rows.nth(0).textContent();
	const second = await rows.nth(1).textContent();
	assert.match(first, /ui\.login/);
	assert.match(first, new RegExp(weir.user));
	assert.match(first, /127\.0\.0\.1:\d+/);
	assert.match(second, /api\.post_connection/);
	assert.match(second, /token/);
	assert.match(second, /connection id warehouse/);
	assert.match(second, /fields: .*password/);
	assert.doesNotMatch(await page.locator('main').textContent(), new RegExp(SECRET));
	await screenshot(page, 'event-log');

	await page.getByTestId('events-filter-event').fill('api.post_connection');
	await page.getByTestId('events-filter').getByRole('button', { name: 'Filter' }).click();
	await waitFor(async () => (await rows.count()) === 1 && /api\.post_connection/.test(await rows.nth(0).textContent()),
		{ what: 'the filtered list' });
	assert.match(page.url(), /#\/events\?event=api\.post_connection/);
	assert.match(await page.getByTestId('events-total').textContent(), /of 1$/);
});

test('a change made with a person\'s token names its user and the token', async () => {
	const made = await weir.api('POST', '/api/v1/weir/tokens', { user: weir.user, name: 'ui-script' });
	assert.equal(made.status, 201, JSON.stringify(made.body));
	const r = await weir.api('POST', '/api/v1/variables', { key: 'by_token', value: '1' },
		{ headers: { Authorization: 'Bearer ' + made.body.token } });
	assert.equal(r.status, 200, JSON.stringify(r.body));
	// the record is written as the request ends: wait for it, then load the page afresh (a
	// change of the hash alone would keep the page of the previous test)
	await waitFor(async () => (await weir.api('GET', '/api/v1/eventLogs?event=api.post_variables'))
		.body.total_entries === 1, { what: 'the variable\'s record in the API' });
	await login(page, weir);
	await page.goto('about:blank');
	await page.goto(weir.url + '/#/events?event=api.post_variables');
	const rows = page.locator('[data-testid^="event-row-"]');
	await waitFor(async () => (await rows.count()) === 1, { what: 'the variable\'s record' });
	assert.equal(await rows.nth(0).getByTestId('event-token').textContent(), 'token ui-script');
	assert.match(await rows.nth(0).getByTestId('event-owner').textContent(), new RegExp('^' + weir.user));
	assert.doesNotMatch(await page.locator('main').textContent(), new RegExp(made.body.token));
});
