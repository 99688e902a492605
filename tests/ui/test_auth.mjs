// test_auth.mjs: logging in to the UI in a real browser: a wrong password is refused with a
// message, the right one and the token are let in, the session cookie is HttpOnly and
// SameSite=Strict, a state-changing request without the CSRF token is rejected with 403
// (and stores nothing), and logging out ends the session.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { jobSpec, screenshot, withUi } from './harness.mjs';

let weir, page;
withUi((ui) => ({ weir, page } = ui));

test('a page asked for without a session shows the login form', async () => {
	await page.goto(weir.url + '/#/jobs');
	await page.getByTestId('login-user').waitFor();
	assert.match(page.url(), /#\/login/);
	assert.equal(await page.getByTestId('session-user').isVisible(), false);
});

test('a wrong password is refused with a message', async () => {
	await page.goto(weir.url + '/#/login');
	await page.getByLabel('User').fill(weir.user);
	await page.getByLabel('Password').fill(weir.password + '-wrong');
	await page.getByRole('button', { name: 'Log in' }).click();
	const err = page.getByTestId('login-error');
	await err.waitFor();
	assert.match(await err.textContent(), /wrong user or password/i);
	assert.equal((await page.context().cookies()).filter((c) => c.name === 'weir_session').length, 0);
	await screenshot(page, 'login-refused');
});

test('the right password logs in with an HttpOnly, SameSite=Strict cookie', async () => {
	await page.goto(weir.url + '/#/login?next=%2Fjobs');
	await page.getByLabel('User').fill(weir.user);
	await page.getByLabel('Password').fill(weir.password);
	await screenshot(page, 'login');
	await page.getByRole('button', { name: 'Log in' }).click();
	await page.getByTestId('session-user').filter({ hasText: weir.user }).waitFor();
	await page.getByTestId('jobs-page').waitFor();
	const cookie = (await page.context().cookies()).find((c) => c.name === 'weir_session');
	assert.ok(cookie, 'a weir_session cookie');
	assert.equal(cookie.httpOnly, true);
	assert.equal(cookie.sameSite, 'Strict');
	// the page's script cannot read it
	assert.doesNotMatch(await page.evaluate(() => document.cookie), /weir_session/);
});

test('a state-changing request without the CSRF token is rejected with 403', async () => {
	const spec = jobSpec({ worker: { command: 'true' } }, { name: 'csrf-probe' });
	const before = (await weir.api('GET', '/api/v1/jobs')).body.jobs.length;
	const res = await page.evaluate(async (body) => {
		const r = await fetch('/api/v1/jobs', { method: 'POST', headers: { 'Content-Type': 'application/json' },
			body: JSON.stringify(body) });
		const wrong = await fetch('/api/v1/jobs', { method: 'POST', body: JSON.stringify(body),
			headers: { 'Content-Type': 'application/json', 'X-CSRF-Token': 'not-the-token' } });
		return { status: r.status, text: await r.text(), wrong: wrong.status };
	}, spec);
	assert.equal(res.status, 403, res.text);
	assert.match(res.text, /CSRF/i);
	assert.equal(res.wrong, 403);
	assert.equal((await weir.api('GET', '/api/v1/jobs')).body.jobs.length, before, 'nothing was stored');
	// the same request with the session's token goes through
	const ok = await page.evaluate(async (body) => {
		const s = await (await fetch('/ui/session')).json();
		const r = await fetch('/api/v1/jobs', { method: 'POST', body: JSON.stringify(body),
			headers: { 'Content-Type': 'application/json', 'X-CSRF-Token': s.csrf_token } });
		return r.status;
	}, spec);
	assert.equal(ok, 201);
});

test('logging out ends the session; the token logs in too', async () => {
	await page.getByTestId('logout').click();
	await page.getByTestId('login-user').waitFor();
	const status = await page.evaluate(async () => (await fetch('/api/v1/jobs')).status);
	assert.equal(status, 401);

	await page.getByTestId('login-switch').click();
	await page.getByLabel('Server token').fill(weir.token);
	await page.getByRole('button', { name: 'Log in' }).click();
	await page.getByTestId('jobs-page').waitFor();
	await page.getByTestId('job-row-1').waitFor(); // the job submitted with the CSRF token
	assert.deepEqual(page.errors.filter((e) => !/401|403/.test(e)), []);
});
