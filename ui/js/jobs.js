// jobs.js: the jobs pages: the list (#/jobs, filter by state, refreshed every 2 s) and a
// job's page (#/jobs/ID: state and reason, the task table, events, a live log per task,
// the Kill button; a warm worker's calls, docs/internals/calls.md).  Data: weir's own routes under /api/v1/jobs (docs/api.md).

import {
	api, clear, confirmDialog, formatBytes, formatDuration, formatTime, h, legend, logViewer, navigate,
	may, poll, route, secondsBetween, stateBadge, toast,
} from './core.js';

const JOB_STATES = ['queued', 'starting', 'running', 'succeeded', 'failed', 'killed'];
const JOB_FINAL = new Set(['succeeded', 'failed', 'killed']);
const TASK_FINAL = new Set(['succeeded', 'failed', 'killed', 'lost']);
const JOB_LEGEND = ['queued', 'running', 'succeeded', 'failed', 'killed'];
// a Ray program's warm worker (python/weir/remote/warm.py): its page lists its calls
const WARM_WORKER = 'warm-worker';
const CALLS_SHOWN = 200;

// "2g" style memory of a role: memory_mb from the list's roles.
function mem(mb) {
	return mb === null || mb === undefined ? '—' : formatBytes(mb * 1024 * 1024);
}

function rolesCell(job) {
	if (!Array.isArray(job.roles) || !job.roles.length) return '—';
	return h('span', { class: 'roles-cell' }, job.roles.map((r) => h('span', {}, `${r.name} × ${r.instances}`)));
}

function resourcesCell(job) {
	if (!Array.isArray(job.roles) || !job.roles.length) return '—';
	let vc = 0, mb = 0, g = 0;
	for (const r of job.roles) {
		const n = r.instances || 0;
		vc += (r.vcores || 0) * n;
		mb += (r.memory_mb || 0) * n;
		g += (r.gpus || 0) * n;
	}
	return `${vc} vcore${vc === 1 ? "" : "s"}, ${mem(mb)}` + (g ? `, ${g} GPU${g > 1 ? 's' : ''}` : '');
}

function tasksCell(job) {
	const by = job.tasks_by_state;
	if (!by || typeof by !== 'object') return '—';
	const parts = Object.entries(by).filter(([, n]) => n > 0);
	if (!parts.length) return '—';
	return h('span', { class: 'task-states' }, parts.map(([s, n], i) => [i ? ' ' : '', stateBadge(s), ' ', String(n)]));
}

function jobDuration(job) {
	return formatDuration(secondsBetween(job.started_at, job.ended_at));
}

// Brings tbody's rows to `rows` (each with a data-key) touching only what changed: a row that
// stays keeps its node, and in it only the cells that differ are replaced, so a refresh every
// 2 s keeps keyboard focus (on a link, a Log button) and the reader's selection.
function reconcileRows(tbody, rows) {
	const old = new Map([...tbody.children].map((tr) => [tr.dataset.key, tr]));
	const keep = new Set();
	rows.forEach((tr, i) => {
		let cur = old.get(tr.dataset.key);
		if (cur) {
			for (const a of tr.getAttributeNames()) cur.setAttribute(a, tr.getAttribute(a));
			for (const a of cur.getAttributeNames()) if (!tr.hasAttribute(a)) cur.removeAttribute(a);
			[...tr.cells].forEach((td, c) => {
				if (!cur.cells[c]) cur.appendChild(td);
				else if (!cur.cells[c].isEqualNode(td)) cur.replaceChild(td, cur.cells[c]);
			});
			while (cur.cells.length > tr.cells.length) cur.lastElementChild.remove();
		} else cur = tr;
		keep.add(cur);
		if (tbody.children[i] !== cur) tbody.insertBefore(cur, tbody.children[i] || null);
	});
	for (const tr of [...tbody.children]) if (!keep.has(tr)) tr.remove();
}

// ---- #/jobs -------------------------------------------------------------------------------------

route('/jobs', (root, params, query) => {
	const state = JOB_STATES.includes(query.state) ? query.state : '';
	const filter = h('select', { id: 'job-state-filter', 'data-testid': 'job-state-filter' },
		h('option', { value: '' }, 'all states'),
		JOB_STATES.map((s) => h('option', { value: s, selected: s === state }, s)));
	filter.addEventListener('change', () => navigate('/jobs' + (filter.value ? '?state=' + filter.value : '')));
	const tbody = h('tbody');
	const note = h('p', { class: 'muted', 'data-testid': 'jobs-empty', hidden: true },
		state ? `No ${state} jobs.` : 'No jobs yet: submit one with `weir submit job.yaml`.');
	const updated = h('span', { class: 'muted', 'aria-live': 'off', 'data-testid': 'jobs-updated' });
	const banner = h('p', { class: 'error', role: 'alert', 'data-testid': 'jobs-error', hidden: true });
	root.appendChild(h('section', { class: 'page', 'data-testid': 'jobs-page' },
		h('h1', {}, 'Jobs'), banner,
		h('div', { class: 'toolbar' }, h('label', { for: 'job-state-filter' }, 'State'), filter,
			h('span', { class: 'spacer' }), updated),
		h('div', { class: 'table-wrap' },
			h('table', { class: 'data', 'data-testid': 'jobs-table' },
				h('caption', { class: 'muted', hidden: true }, 'Jobs, newest first'),
				h('thead', {}, h('tr', {},
					['ID', 'Name', 'State', 'Roles', 'Resources', 'Tasks', 'Submitted', 'Duration']
						.map((t) => h('th', { scope: 'col' }, t)))),
				tbody)),
		note, legend(JOB_LEGEND)));

	return poll(async () => {
		let body;
		try {
			body = await api('/api/v1/jobs', { query: { state: state || undefined, limit: 200 } });
			banner.hidden = true;
		} catch (e) {
			banner.textContent = 'Could not refresh: ' + e.message;
			banner.hidden = false;
			throw e;
		}
		const jobs = body.jobs || [];
		updated.textContent = 'updated ' + formatTime(new Date().toISOString()).slice(11);
		note.hidden = jobs.length > 0;
		reconcileRows(tbody, jobs.map((j) =>
			h('tr', { 'data-key': String(j.id), 'data-testid': 'job-row-' + j.id, 'data-state': j.state },
				h('td', { class: 'num' }, h('a', { href: '#/jobs/' + j.id, 'aria-label': `Job ${j.id} ${j.name || ''}` }, String(j.id))),
				h('td', {}, h('a', { href: '#/jobs/' + j.id }, j.name || '(unnamed)')),
				h('td', { class: 'wrap' }, stateBadge(j.state), j.reason ? h('div', { class: 'muted' }, j.reason) : null),
				h('td', {}, rolesCell(j)),
				h('td', {}, resourcesCell(j)),
				h('td', {}, tasksCell(j)),
				h('td', {}, formatTime(j.submitted_at)),
				h('td', { class: 'num' }, jobDuration(j)))));
	}, 2000);
});

// ---- #/jobs/ID ----------------------------------------------------------------------------------

// Peak memory and CPU time are reported when a task ends: a 0 before that means "not yet".
function measured(t, v) {
	return v !== null && v !== undefined && (v > 0 || !!t.ended_at);
}

function taskKey(t) {
	return `${t.role}:${t.index}`;
}

route('/jobs/:id', (root, params, query) => {
	const id = params.id;
	if (!/^\d+$/.test(id)) throw new Error(`no job "${id}": job ids are numbers`);
	const title = h('h1', { 'data-testid': 'job-title' }, `Job ${id}`);
	const stateEl = h('span', { 'data-testid': 'job-state' });
	const reasonEl = h('span', { class: 'reason', 'data-testid': 'job-reason' });
	const facts = h('dl', { class: 'facts' });
	const killBtn = h('button', { type: 'button', class: 'btn danger', 'data-testid': 'kill-job', hidden: true }, 'Kill');
	const tbody = h('tbody');
	const events = h('ol', { class: 'events', 'data-testid': 'job-events' });
	const logTitle = h('h2', { id: 'log-title', 'data-testid': 'log-title' }, 'Log');
	const logBox = h('div', { class: 'log-box' });
	let tasks = []; // of the attempt shown
	const wantAttempt = /^\d+$/.test(query.attempt || '') ? Number(query.attempt) : null; // null: current
	const attemptSel = h('select', { id: 'job-attempt', 'data-testid': 'job-attempt' });
	const attemptBox = h('span', { class: 'toolbar', hidden: true }, h('label', { for: 'job-attempt' }, 'Attempt'), attemptSel);
	attemptSel.addEventListener('change', () => navigate(`/jobs/${id}` + (attemptSel.value ? '?attempt=' + attemptSel.value : '')));
	const banner = h('p', { class: 'error', role: 'alert', 'data-testid': 'job-error', hidden: true });
	const callsCount = h('p', { class: 'muted', 'data-testid': 'job-calls-count' });
	const callsBody = h('tbody');
	const callsBox = h('div', { hidden: true, 'data-testid': 'job-calls' }, h('h2', {}, 'Calls'), callsCount,
		h('div', { class: 'table-wrap' }, h('table', { class: 'data' },
			h('thead', {}, h('tr', {}, ['Call', 'Function', 'State', 'Tries', 'Started', 'Duration', 'Error']
				.map((t) => h('th', { scope: 'col' }, t)))),
			callsBody)));
	root.appendChild(h('section', { class: 'page', 'data-testid': 'job-page' },
		h('p', {}, h('a', { href: '#/jobs' }, '← Jobs')),
		h('div', { class: 'job-head' },
			h('div', {}, title, h('p', {}, stateEl, ' ', reasonEl), facts),
			h('div', { class: 'toolbar' }, killBtn)),
		banner,
		h('div', { class: 'toolbar' }, h('h2', {}, 'Tasks'), attemptBox),
		h('div', { class: 'table-wrap' },
			h('table', { class: 'data', 'data-testid': 'tasks-table' },
				h('thead', {}, h('tr', {},
					['Role', 'Index', 'Host', 'State', 'Attempt', 'Exit code', 'Started', 'Ended', 'Peak memory', 'CPU time', 'Log']
						.map((t) => h('th', { scope: 'col' }, t)))),
				tbody)),
		legend(['pending', 'running', 'succeeded', 'failed', 'killed']),
		logTitle, logBox, callsBox,
		h('h2', {}, 'Events'), events));

	let job = null;
	let selected = query.task || null; // "role:index"
	let viewer = null;
	let viewerFor = '';
	let lastEvents = 0;

	const currentTask = () => tasks.find((t) => taskKey(t) === selected);

	function openLog(t) {
		selected = taskKey(t);
		const q = new URLSearchParams(query);
		q.set('task', selected);
		history.replaceState(null, '', `#/jobs/${id}?${q}`);
		const want = `${selected}@${t.attempt}`;
		if (want === viewerFor) return;
		viewerFor = want;
		if (viewer) viewer.stop();
		const url = `/api/v1/jobs/${id}/tasks/${encodeURIComponent(t.role)}/${t.index}/logs?attempt=${t.attempt}`;
		// the viewer reads once more after follow() turns false, and stops for good when the
		// server says the task has ended (X-Weir-Task-Ended)
		viewer = logViewer({ url, follow: () => {
			const c = currentTask();
			return !c || !TASK_FINAL.has(c.state);
		} });
		clear(logBox).appendChild(viewer);
		logTitle.textContent = `Log of ${t.role}:${t.index} (attempt ${t.attempt})`;
		for (const tr of tbody.children) tr.classList.toggle('selected', tr.dataset.task === selected);
	}

	function renderHead() {
		title.textContent = `Job ${job.id} · ${job.name || '(unnamed)'}`;
		clear(stateEl).appendChild(stateBadge(job.state));
		reasonEl.textContent = job.reason || '';
		killBtn.hidden = JOB_FINAL.has(job.state) || !may('kill_job');
		const rows = [
			['Framework', job.framework || '—'],
			['Attempt', `${job.attempt}${job.max_restarts ? ' (restarts allowed: ' + job.max_restarts + ')' : ''}`],
			['Priority', String(job.priority ?? 0)],
			['Submitted', formatTime(job.submitted_at)],
			['Started', formatTime(job.started_at)],
			['Ended', formatTime(job.ended_at)],
			['Duration', jobDuration(job)],
			['Exit code', job.exit_code === null || job.exit_code === undefined ? '—' : String(job.exit_code)],
		];
		clear(facts);
		for (const [k, v] of rows) facts.append(h('div', {}, h('dt', {}, k), h('dd', {}, v)));
	}

	function renderTasks() {
		const rows = [];
		for (const t of tasks) {
			const k = taskKey(t);
			const btn = h('button', { type: 'button', class: 'btn small', 'data-testid': `task-log-${t.role}-${t.index}`,
				'aria-label': `Show the log of ${k}` }, 'Log');
			btn.addEventListener('click', () => openLog(t));
			const exit = t.exit_code === null || t.exit_code === undefined ? (t.signal ? `signal ${t.signal}` : '—') : String(t.exit_code);
			rows.push(h('tr', { 'data-key': `${k}@${t.attempt}`, 'data-testid': `task-row-${t.role}-${t.index}`, 'data-task': k,
				'data-state': t.state,
				class: k === selected ? 'selected' : null },
				h('td', {}, t.role), h('td', { class: 'num' }, String(t.index)), h('td', {}, t.host || '—'),
				h('td', { class: 'wrap' }, stateBadge(t.state), t.reason ? h('div', { class: 'muted' }, t.reason) : null),
				h('td', { class: 'num' }, String(t.attempt)), h('td', { class: 'num' }, exit),
				h('td', {}, formatTime(t.started_at)), h('td', {}, formatTime(t.ended_at)),
				h('td', { class: 'num' }, measured(t, t.peak_memory_bytes) ? formatBytes(t.peak_memory_bytes) : '—'),
				h('td', { class: 'num' }, measured(t, t.cpu_time_ms) ? formatDuration(t.cpu_time_ms / 1000) : '—'),
				h('td', {}, btn)));
		}
		if (!tasks.length) rows.push(h('tr', { 'data-key': 'none' }, h('td', { colspan: '11', class: 'muted' }, 'No tasks yet (the job waits for resources).')));
		reconcileRows(tbody, rows);
		// a new attempt without tasks yet keeps the old log until it has some
		const cur = currentTask() || tasks[0];
		if (cur) openLog(cur);
	}

	function renderEvents(list) {
		if (list.length === lastEvents) return;
		lastEvents = list.length;
		clear(events);
		for (const e of list) {
			events.appendChild(h('li', {}, h('time', { datetime: e.time }, formatTime(e.time)),
				h('strong', {}, e.kind), ' ', e.message || ''));
		}
	}

	// a warm worker's calls: how many in each state, and the first CALLS_SHOWN
	function renderCalls(got) {
		const counts = got.counts || {};
		const total = Object.values(counts).reduce((a, b) => a + b, 0);
		callsBox.hidden = total === 0;
		if (!total) return;
		const parts = Object.entries(counts).filter(([, n]) => n).map(([s, n]) => `${n} ${s}`);
		callsCount.textContent = `${total} call${total === 1 ? '' : 's'}: ${parts.join(', ')}` +
			(total > CALLS_SHOWN ? ` (the first ${CALLS_SHOWN} below)` : '');
		reconcileRows(callsBody, (got.calls || []).map((c) => h('tr', { 'data-key': String(c.id), 'data-state': c.state },
			h('td', { class: 'num' }, String(c.id)), h('td', {}, c.name),
			h('td', {}, stateBadge(c.state)), h('td', { class: 'num' }, String(c.tries)),
			h('td', {}, formatTime(c.started_at)),
			h('td', { class: 'num' }, c.duration_ms === undefined ? '—' : `${c.duration_ms} ms`),
			h('td', { class: 'wrap' }, c.error || ''))));
	}

	killBtn.addEventListener('click', async () => {
		const n = (job && job.tasks || []).length;
		const ok = await confirmDialog(`Kill job ${id}${job && job.name ? ' (' + job.name + ')' : ''}? ` +
			`Its ${n} task${n === 1 ? '' : 's'} will be stopped.`, { confirmLabel: 'Kill job' });
		if (!ok) return;
		try {
			await api(`/api/v1/jobs/${id}`, { method: 'DELETE' });
			toast(`Job ${id} is being killed`, 'success');
		} catch (e) {
			toast(`Kill failed: ${e.message}`, 'error');
		}
		refresh();
	});

	function renderAttempts() {
		attemptBox.hidden = !(job.attempt > 1);
		if (attemptSel.options.length === job.attempt) return;
		clear(attemptSel).appendChild(h('option', { value: '', selected: wantAttempt === null }, `${job.attempt} (current)`));
		for (let a = job.attempt - 1; a >= 1; a--) attemptSel.appendChild(h('option', { value: String(a), selected: a === wantAttempt }, String(a)));
	}

	async function refresh() {
		let ev;
		try {
			[job, ev] = await Promise.all([api(`/api/v1/jobs/${id}`), api(`/api/v1/jobs/${id}/events`)]);
			tasks = wantAttempt === null || wantAttempt === job.attempt ? job.tasks || []
				: (await api(`/api/v1/jobs/${id}/tasks`, { query: { attempt: wantAttempt } })).tasks || [];
			banner.hidden = true;
		} catch (e) {
			// a job that does not exist, or the server out of reach: say so, keep what is shown
			banner.textContent = (e.status === 404 ? '' : 'Could not refresh: ') + e.message;
			banner.hidden = false;
			if (!job) return;
			throw e;
		}
		renderHead();
		renderAttempts();
		renderTasks();
		renderEvents(ev.events || []);
		if (job.name === WARM_WORKER)
			renderCalls(await api(`/api/v1/jobs/${id}/calls`, { query: { limit: CALLS_SHOWN } }));
	}

	const stop = poll(refresh, 2000);
	return () => {
		stop();
		if (viewer) viewer.stop();
	};
});
