// Browser tests of the web UI by role (docs/security.md, "Roles"): the page shows only what
// the signed-in user's role may do, as GET /api/v1/ui/me says from the route table's roles.
// A Viewer sees no trigger button, no clear or mark controls and no note editing, and a POST
// forged from the Viewer's own page (its cookie and CSRF token) is refused 403; a User
// triggers a run from the button and it runs, and writes a note on the run and on a task
// instance; on a DAG whose access list lets the User only read it, the User sees no trigger
// button and the DAG's pause switch is disabled, and a DAG it may not read is not listed.

import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { login, openBrowser, screenshot, startDagsUi, waitFor, withUi } from './harness.mjs';

const DAG = `dag_id: roles_ui
tasks:
  - task_id: hello
    command: echo hello
  - task_id: after
    depends_on: [hello]
    command: echo after
`;
// readable by every role, changeable by none but an Admin; and one only an Admin sees
const GUARDED = `dag_id: guarded
access:
  Viewer: read
tasks:
  - task_id: t
    command: "true"
`;
const HIDDEN = `dag_id: hidden
access: {}
tasks:
  - task_id: t
    command: "true"
`;
const VIEWER = { name: 'vera', password: 'viewer-pass-1', role: 'Viewer' };
const USER = { name: 'uma', password: 'user-pass-1', role: 'User' };

describe('the UI by role', () => {
	let weir;
	let runId;

	withUi((ui) => ({ weir } = ui), () =>
		startDagsUi('weir-ui-roles-', [], {
			extra: { 'roles_ui.yaml': DAG, 'guarded.yaml': GUARDED, 'hidden.yaml': HIDDEN },
			dagCount: 3, users: [VIEWER, USER] }));

	const runsOf = async () =>
		(await weir.api('GET', '/api/v1/dags/roles_ui/dagRuns')).body.dag_runs;

	// A browser logged in as `who`; closed by the caller.
	async function as(who) {
		const b = await openBrowser(weir);
		await login(b.page, weir, { user: who.name, password: who.password });
		await b.page.getByTestId('session-role').filter({ hasText: who.role }).waitFor();
		return b;
	}

	test('a Viewer: no trigger, clear, mark or note controls; a forged POST is refused', async () => {
		const r = await weir.api('POST', '/api/v1/dags/roles_ui/dagRuns', { dag_run_id: 'seen' });
		assert.equal(r.status, 200, JSON.stringify(r.body));
		runId = r.body.dag_run_id;
		await waitFor(async () => (await runsOf())[0].state === 'success',
			{ timeout: 60000, what: 'the run to succeed' });
		const { browser, page } = await as(VIEWER);
		try {
			// what the server told the page
			const me = await page.evaluate(async () => (await fetch('/api/v1/ui/me')).json());
			assert.equal(me.role, 'Viewer');
			assert.equal(me.may.trigger, false);
			assert.equal(me.may.clear, false);

			await page.goto(weir.url + '/#/dags/roles_ui');
			await page.getByTestId('dag-title').waitFor();
			const cell = page.getByTestId(`grid-cell-hello-${runId}`);
			await cell.and(page.locator('[data-state="success"]')).waitFor();
			assert.equal(await page.getByTestId('trigger-button').count(), 0, 'no trigger button');
			assert.equal(await page.getByTestId('pause-roles_ui').isDisabled(), true,
				'the pause switch shows the state but cannot change it');
			// a task instance's panel: its log and note, no clear, no marks, no note editing
			await cell.click();
			const panel = page.getByTestId('ti-panel');
			await panel.getByTestId('log-text').filter({ hasText: 'hello' }).waitFor();
			await panel.getByTestId('note-text').waitFor();
			assert.equal(await panel.getByTestId('clear-button').count(), 0);
			assert.equal(await panel.getByTestId('mark-success').count(), 0);
			assert.equal(await panel.getByTestId('mark-failed').count(), 0);
			assert.equal(await panel.getByTestId('note-edit').count(), 0);
			// the run's panel: a note set by someone else is shown, not editable
			await weir.api('PATCH', `/api/v1/dags/roles_ui/dagRuns/${runId}/setNote`,
				{ note: 'checked by the ops team' });
			await page.getByTestId(`grid-run-${runId}`).click();
			await panel.getByTestId('note-text').filter({ hasText: 'checked by the ops team' }).waitFor();
			assert.equal(await panel.getByTestId('note-edit').count(), 0);
			assert.equal(await panel.getByTestId('mark-success').count(), 0);
			await screenshot(page, 'roles-viewer');

			// a trigger forged from the page itself: the session's cookie and CSRF token, refused
			const forged = await page.evaluate(async () => {
				const s = await (await fetch('/ui/session')).json();
				const post = async (method, path, body) => {
					const r = await fetch(path, { method, body: JSON.stringify(body),
						headers: { 'Content-Type': 'application/json', 'X-CSRF-Token': s.csrf_token } });
					return { status: r.status, body: await r.json() };
				};
				return {
					trigger: await post('POST', '/api/v1/dags/roles_ui/dagRuns', {}),
					note: await post('PATCH', '/api/v1/dags/roles_ui/dagRuns/seen/setNote', { note: 'x' }),
					clear: await post('POST', '/api/v1/dags/roles_ui/clearTaskInstances',
						{ dag_run_id: 'seen', dry_run: false }),
				};
			});
			for (const [what, r] of Object.entries(forged)) {
				assert.equal(r.status, 403, `${what}: ${JSON.stringify(r.body)}`);
				assert.match(r.body.detail, /needs the role User or above \(this user's role is Viewer\)/);
			}
			assert.equal((await runsOf()).length, 1, 'no run was started');
			const run = await weir.api('GET', `/api/v1/dags/roles_ui/dagRuns/${runId}`);
			assert.equal(run.body.note, 'checked by the ops team');
			assert.deepEqual(page.errors.filter((e) => !/403/.test(e)), []);
		} finally {
			await browser.close();
		}
	});

	test('a User: the trigger button starts a run that runs; notes are written from the panel', async () => {
		const { browser, page } = await as(USER);
		try {
			await page.goto(weir.url + '/#/dags/roles_ui');
			await page.getByTestId('trigger-button').click();
			await page.getByTestId('trigger-dialog').waitFor();
			await page.getByTestId('trigger-submit').click();
			await page.getByTestId('trigger-dialog').waitFor({ state: 'detached' });
			const run = await waitFor(async () => {
				const rs = await runsOf();
				return rs.length === 2 && rs.find((r) => r.dag_run_id !== runId);
			}, { what: 'the run the button started' });
			await page.getByTestId(`grid-run-${run.dag_run_id}`).and(page.locator('[data-state="success"]'))
				.waitFor({ timeout: 60000 });

			// the run's note, from its panel
			await page.getByTestId(`grid-run-${run.dag_run_id}`).click();
			const panel = page.getByTestId('ti-panel');
			await panel.getByTestId('mark-success').waitFor();
			await panel.getByTestId('note-edit').click();
			await panel.getByTestId('note-input').fill('started from the button\nby uma');
			await panel.getByTestId('note-save').click();
			await panel.getByTestId('note-text').filter({ hasText: 'by uma' }).waitFor();
			const got = await weir.api('GET', `/api/v1/dags/roles_ui/dagRuns/${run.dag_run_id}`);
			assert.equal(got.body.note, 'started from the button\nby uma');

			// a task instance's note, kept through the panel's refreshes while typed
			await page.getByTestId(`grid-cell-after-${run.dag_run_id}`).click();
			await panel.getByTestId('clear-button').waitFor();
			await panel.getByTestId('note-edit').click();
			await panel.getByTestId('note-input').fill('looked fine');
			await panel.getByTestId('note-save').click();
			await panel.getByTestId('note-text').filter({ hasText: 'looked fine' }).waitFor();
			const ti = await weir.api('GET',
				`/api/v1/dags/roles_ui/dagRuns/${run.dag_run_id}/taskInstances/after`);
			assert.equal(ti.body.note, 'looked fine');
			await screenshot(page, 'roles-user-note');
			assert.deepEqual(page.errors, []);
		} finally {
			await browser.close();
		}
	});

	test('a DAG\'s access list: read only, the User sees no trigger and a disabled switch', async () => {
		const { browser, page } = await as(USER);
		try {
			await page.goto(weir.url + '/#/dags');
			await page.getByTestId('dag-row-guarded').waitFor();
			await page.getByTestId('dag-row-roles_ui').waitFor();
			assert.equal(await page.getByTestId('dag-row-hidden').count(), 0, 'hidden is not listed');
			assert.equal(await page.getByTestId('pause-guarded').isDisabled(), true);
			assert.equal(await page.getByTestId('pause-roles_ui').isDisabled(), false);
			await page.goto(weir.url + '/#/dags/guarded');
			await page.getByTestId('dag-title').waitFor();
			await page.getByTestId('dag-status').filter({ hasText: 'run' }).waitFor();
			assert.equal(await page.getByTestId('trigger-button').count(), 0);
			assert.equal(await page.getByTestId('pause-guarded').isDisabled(), true);
			// and the server refuses what the page does not offer
			const forged = await page.evaluate(async () => {
				const s = await (await fetch('/ui/session')).json();
				const r = await fetch('/api/v1/dags/guarded/dagRuns', { method: 'POST', body: '{}',
					headers: { 'Content-Type': 'application/json', 'X-CSRF-Token': s.csrf_token } });
				return { status: r.status, body: await r.json() };
			});
			assert.equal(forged.status, 403, JSON.stringify(forged.body));
			assert.match(forged.body.detail, /access list does not let uma \(role User\) act on it/);
			assert.deepEqual(page.errors.filter((e) => !/403/.test(e)), []);
		} finally {
			await browser.close();
		}
	});
});
