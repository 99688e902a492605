// The Grid tab (runs as columns, oldest left; tasks as rows; cells coloured by state) and the
// side panel a click opens: a task instance's tries, logs, outputs and command, with Clear, or a
// run's details; both offer marking the run success or failed.  The panel lives outside the
// grid's table so that the 2 s refresh rebuilds the table without closing it.

import {
	api, h, clear, stateBadge, formatTime, formatDuration, confirmDialog, toast, logViewer, may,
} from './core.js';
import {
	enc, dagPath, runPath, tiPath, stateColour, stateName, runLabel, ms, textColour,
} from './dag_util.js';
import { runAlerts, tiSlaText } from './dag_notify.js';
import { waitingText, sensorFields } from './dag_sensor.js';
import { noteBox } from './dag_note.js';

const ACTIVE = new Set(['running', 'queued', 'scheduled', 'up_for_retry', 'up_for_reschedule', 'restarting', 'deferred']);

// A readable summary of a foreach task's states ("3 success, 1 running").
function countsText(counts) {
	return Object.entries(counts || {}).filter(([, n]) => n > 0)
		.map(([s, n]) => `${n} ${s}`).join(', ');
}

export function renderGrid(data, sel, onCell, onRun) {
	const runs = data.runs || [];
	const table = h('table', { class: 'dag-grid', 'data-testid': 'dag-grid' });
	const head = h('tr', {}, h('th', { scope: 'col', class: 'dag-grid-corner' }, 'Task'));
	for (const r of runs) {
		const label = `Run ${r.dag_run_id}: ${stateName(r.state)}, ${runLabel(r)}`;
		const b = h('button', {
			type: 'button', class: 'dag-run-mark', title: label, 'aria-label': label,
			'data-testid': `grid-run-${r.dag_run_id}`, 'data-state': stateName(r.state),
			'on:click': () => onRun(r.dag_run_id),
		});
		b.style.background = stateColour(r.state);
		if (sel.runId === r.dag_run_id)
			b.classList.add('selected');
		head.appendChild(h('th', { scope: 'col' }, b));
	}
	table.appendChild(h('thead', {}, head));
	const body = h('tbody');
	for (const t of data.tasks || []) {
		const tr = h('tr', {}, h('th', { scope: 'row', class: 'dag-grid-task' },
			t.task_id, t.is_mapped ? h('span', { class: 'dag-mapped', title: 'foreach' }, ' [ ]')
				: null));
		const inst = t.instances || [];
		runs.forEach((r, i) => {
			const ti = inst[i] && inst[i].dag_run_id === r.dag_run_id ? inst[i]
				: inst.find((x) => x.dag_run_id === r.dag_run_id);
			const state = ti ? ti.state : null;
			let label = `${t.task_id}, run ${r.dag_run_id}: ${stateName(state)}`;
			if (t.is_mapped && ti)
				label += ` (${ti.map_index_count || 0} instances${ti.states_count
					? ': ' + countsText(ti.states_count) : ''})`;
			if (ti && ti.try_number > 1)
				label += `, try ${ti.try_number}`;
			if (ti && waitingText(ti))
				label += `, ${waitingText(ti)}`;
			const b = h('button', {
				type: 'button', class: 'dag-cell', title: label, 'aria-label': label,
				'data-testid': `grid-cell-${t.task_id}-${r.dag_run_id}`,
				'data-state': stateName(state),
				'on:click': () => onCell(r.dag_run_id, t.task_id, !!t.is_mapped),
			}, t.is_mapped && ti && ti.map_index_count ? String(ti.map_index_count) : '');
			b.style.background = stateColour(state);
			b.style.color = textColour(stateColour(state));
			if (sel.runId === r.dag_run_id && sel.taskId === t.task_id)
				b.classList.add('selected');
			tr.appendChild(h('td', {}, b));
		});
		body.appendChild(tr);
	}
	table.appendChild(body);
	return table;
}

// Airflow's routes give what the grid route gives, in one request per run: used when the
// server has no grid route (an older weir).
export async function gridFromRuns(dagId, limit, tasks) {
	const rr = await api(dagPath(dagId) + '/dagRuns',
		{ query: { limit, order_by: '-execution_date' } });
	const runs = rr.dag_runs.slice().reverse();
	const tis = await Promise.all(runs.map((r) =>
		api(runPath(dagId, r.dag_run_id) + '/taskInstances', { query: { limit: 1000 } })));
	const ids = tasks ? tasks.map((t) => t.task_id) : [];
	const byTask = new Map(ids.map((id) => [id, runs.map((r) => ({ dag_run_id: r.dag_run_id,
		state: null }))]));
	const mapped = new Set(tasks ? tasks.filter((t) => t.is_mapped).map((t) => t.task_id) : []);
	runs.forEach((r, i) => {
		for (const ti of tis[i].task_instances) {
			if (!byTask.has(ti.task_id))
				byTask.set(ti.task_id, runs.map((x) => ({ dag_run_id: x.dag_run_id, state: null })));
			const cell = byTask.get(ti.task_id)[i];
			if (ti.map_index >= 0) {
				mapped.add(ti.task_id);
				cell.map_index_count = (cell.map_index_count || 0) + 1;
				cell.states_count = cell.states_count || {};
				const s = stateName(ti.state);
				cell.states_count[s] = (cell.states_count[s] || 0) + 1;
				if (!cell.state || s === 'failed' || (s === 'running' && cell.state !== 'failed'))
					cell.state = ti.state;
			} else {
				Object.assign(cell, ti);
			}
		}
	});
	return { runs, tasks: [...byTask].map(([task_id, instances]) =>
		({ task_id, is_mapped: mapped.has(task_id), instances })) };
}

// The side panel. Returns {el, showTi, showRun, refresh, close, isOpen, selection}.
export function createPanel(dagId, onChange) {
	const el = h('aside', { class: 'dag-panel', 'aria-label': 'Details', hidden: '',
		'data-testid': 'ti-panel' });
	let sel = null;		// {kind: 'ti'|'run', runId, taskId, isMapped, mapIndex, tryNumber, pinned}
	let gen = 0;		// bumps when the selection changes: stale answers are dropped
	let log = null;		// {key, el, alive}: the log viewer of the shown try
	let parts = null;	// the panel's fixed regions, built once per selection

	function stopLog() {
		if (log) {
			log.alive = false;
			if (log.el && log.el.stop)
				log.el.stop();
		}
		log = null;
	}

	function close() {
		stopLog();
		sel = null;
		gen++;
		clear(el);
		el.hidden = true;
		onChange();
	}

	function frame(title, noteAction) {
		clear(el);
		el.hidden = false;
		parts = {
			head: h('div', { class: 'dag-panel-head' },
				h('h2', { 'data-testid': 'ti-panel-title' }, title),
				h('button', { type: 'button', class: 'dag-panel-close', 'aria-label': 'Close panel',
					'on:click': close }, '×')),
			picker: h('div', { class: 'dag-panel-picker' }),
			summary: h('div', { class: 'dag-panel-summary' }),
			details: h('div', { class: 'dag-panel-details' }),
			tries: h('div', { class: 'dag-tries', role: 'tablist', 'aria-label': 'Tries' }),
			tryBody: h('div', { class: 'dag-try', role: 'tabpanel' }),
			note: noteBox(noteAction, dagId),
			actions: h('div', { class: 'dag-panel-actions' }),
		};
		el.append(parts.head, parts.picker, parts.summary, parts.note.el, parts.actions,
			parts.tries, parts.tryBody, parts.details);
	}

	async function markRun(state) {
		const runId = sel.runId;
		const ok = await confirmDialog(`Mark run ${runId} as ${state}? Its unfinished tasks ` +
			`end as ${state === 'success' ? 'success' : 'failed'}.`);
		if (!ok)
			return;
		try {
			await api(runPath(dagId, runId), { method: 'PATCH', body: { state } });
			toast(`Run ${runId} marked ${state}`, 'success');
			onChange(true);
			refresh();
		} catch (e) {
			toast(`Marking run ${runId} failed: ${e.message}`, 'error');
		}
	}

	function runActions() {
		return h('div', { class: 'dag-run-actions' },
			h('button', { type: 'button', class: 'btn', 'data-testid': 'mark-success',
				'on:click': () => markRun('success') }, 'Mark run success'),
			h('button', { type: 'button', class: 'btn danger', 'data-testid': 'mark-failed',
				'on:click': () => markRun('failed') }, 'Mark run failed'));
	}

	function clearForm() {
		const down = h('input', { type: 'checkbox', id: 'clear-downstream',
			'data-testid': 'clear-downstream' });
		const failed = h('input', { type: 'checkbox', id: 'clear-only-failed',
			'data-testid': 'clear-only-failed' });
		down.checked = true;
		const go = async () => {
			const { runId, taskId } = sel;
			const ok = await confirmDialog(`Clear ${taskId} in run ${runId}` +
				(down.checked ? ' and its downstream tasks' : '') +
				(failed.checked ? ' (failed ones only)' : '') + '? They run again.');
			if (!ok)
				return;
			try {
				const r = await api(dagPath(dagId) + '/clearTaskInstances', { method: 'POST',
					body: { dag_run_id: runId, task_ids: [taskId], dry_run: false,
						include_downstream: down.checked, only_failed: failed.checked } });
				const n = (r.task_instances || []).length;
				toast(`Cleared ${n} task instance${n === 1 ? '' : 's'}`, 'success');
				if (sel)
					sel.pinned = false;	// follow the new try
				onChange(true);
				refresh();
			} catch (e) {
				toast(`Clear failed: ${e.message}`, 'error');
			}
		};
		return h('fieldset', { class: 'dag-clear' }, h('legend', {}, 'Clear task instance'),
			h('label', { for: 'clear-downstream' }, down, ' Include downstream'),
			h('label', { for: 'clear-only-failed' }, failed, ' Only failed'),
			h('button', { type: 'button', class: 'btn', 'data-testid': 'clear-button',
				'on:click': go }, 'Clear'));
	}

	function field(name, value) {
		return [h('dt', {}, name), h('dd', {}, value === null || value === undefined ||
			value === '' ? '—' : value)];
	}

	function showTi(runId, taskId, isMapped) {
		stopLog();
		gen++;
		sel = { kind: 'ti', runId, taskId, isMapped, mapIndex: isMapped ? 0 : -1,
			tryNumber: null, pinned: false };
		frame(`${taskId} · ${runId}`, 'ti_note');
		// only what the signed-in role may do (the server refuses the rest anyway)
		parts.actions.append(may('clear', dagId) ? clearForm() : null,
			may('mark', dagId) ? runActions() : null);
		onChange();
		return refresh();
	}

	function showRun(runId) {
		stopLog();
		gen++;
		sel = { kind: 'run', runId };
		frame(`Run ${runId}`, 'note');
		if (may('mark', dagId))
			parts.actions.append(runActions());
		onChange();
		return refresh();
	}

	function renderTry(ti, tries) {
		const { runId, taskId, mapIndex } = sel;
		if (!tries.length) {
			stopLog();
			clear(parts.tries);
			clear(parts.tryBody);
			parts.tryBody.append(h('p', { class: 'dag-empty' }, 'No try yet.'));
			return;
		}
		const latest = tries[tries.length - 1].try_number;
		if (!sel.pinned || !tries.some((t) => t.try_number === sel.tryNumber))
			sel.tryNumber = latest;
		clear(parts.tries);
		for (const t of tries) {
			const on = t.try_number === sel.tryNumber;
			const b = h('button', { type: 'button', role: 'tab', class: 'dag-try-tab',
				'aria-selected': on ? 'true' : 'false', 'data-testid': `try-tab-${t.try_number}`,
				'on:click': () => {
					sel.pinned = true;
					sel.tryNumber = t.try_number;
					renderTry(ti, tries);
				} }, `Try ${t.try_number}`, ' ', stateBadge(stateName(t.state)));
			parts.tries.appendChild(b);
		}
		const cur = tries.find((t) => t.try_number === sel.tryNumber);
		const key = `${runId}/${taskId}/${mapIndex}/${cur.try_number}`;
		const info = h('dl', { class: 'dag-fields dag-try-fields' },
			field('State', stateBadge(stateName(cur.state))),
			field('Started', cur.start_date ? formatTime(cur.start_date) : null),
			field('Ended', cur.end_date ? formatTime(cur.end_date) : null),
			field('Job', cur.job_id ? h('a', { href: `#/jobs/${enc(cur.job_id)}` },
				String(cur.job_id)) : null),
			field('Reason', cur.reason || null));
		if (!log || log.key !== key) {
			stopLog();
			const entry = { key, alive: true, state: cur.state };
			let url = tiPath(dagId, runId, taskId) + '/logs/' + cur.try_number;
			if (mapIndex >= 0)
				url += '?map_index=' + mapIndex;
			entry.el = logViewer({ url, follow: () => entry.alive && ACTIVE.has(entry.state) });
			log = entry;
			clear(parts.tryBody);
			parts.tryBody.append(info, h('div', { class: 'dag-log', 'data-testid': 'ti-log' },
				entry.el));
		} else {
			log.state = cur.state;
			parts.tryBody.replaceChild(info, parts.tryBody.firstChild);
		}
		void ti;
	}

	async function refreshTi(my) {
		const { runId, taskId } = sel;
		const [list, run] = await Promise.all([
			api(runPath(dagId, runId) + '/taskInstances', { query: { limit: 1000 } }),
			api(runPath(dagId, runId)),
		]);
		if (my !== gen)
			return;
		const mine = list.task_instances.filter((t) => t.task_id === taskId)
			.sort((a, b) => a.map_index - b.map_index);
		if (sel.isMapped) {
			clear(parts.picker);
			if (mine.length) {
				if (!mine.some((t) => t.map_index === sel.mapIndex))
					sel.mapIndex = mine[0].map_index;
				const pick = h('select', { id: 'ti-map-index', 'data-testid': 'ti-map-index',
					'on:change': (e) => {
						sel.mapIndex = Number(e.target.value);
						sel.pinned = false;
						stopLog();
						refresh();
					} }, mine.map((t) => h('option', { value: String(t.map_index) },
					`[${t.map_index}] ${stateName(t.state)}`)));
				pick.value = String(sel.mapIndex);
				parts.picker.append(h('label', { for: 'ti-map-index' }, 'Instance '), pick);
			}
		}
		const ti = mine.find((t) => t.map_index === sel.mapIndex);
		clear(parts.summary);
		parts.note.el.hidden = !ti;
		if (ti)
			parts.note.show(ti.note, tiPath(dagId, runId, taskId) +
				(ti.map_index >= 0 ? '/' + ti.map_index : ''));
		if (!ti) {
			clear(parts.details);
			parts.summary.append(h('p', { class: 'dag-empty' },
				sel.isMapped ? 'This foreach task has no instances in this run (yet).'
					: 'This task has no instance in this run.'));
			renderTry(null, []);
			return;
		}
		let outputs = null;
		if (ti.outputs !== null && ti.outputs !== undefined)
			outputs = h('pre', { class: 'dag-pre', 'data-testid': 'ti-outputs' },
				JSON.stringify(ti.outputs, null, 2));
		parts.summary.append(h('dl', { class: 'dag-fields' },
			field('State', stateBadge(stateName(ti.state))),
			field('Run', h('span', {}, stateBadge(stateName(run.state)), ' ', runId)),
			field('Try', `${ti.try_number} of ${(ti.max_tries || 0) + 1}`),
			field('Queued', ti.queued_when ? formatTime(ti.queued_when) : null),
			field('Started', ti.start_date ? formatTime(ti.start_date) : null),
			field('Ended', ti.end_date ? formatTime(ti.end_date) : null),
			field('Duration', ti.duration !== null && ti.duration !== undefined
				? formatDuration(ti.duration) : null),
			field('Pool', ti.pool || null),
			...sensorFields(ti).map(([k, v]) => field(k, v)),
			field('Reason', ti.reason || null),
			field('SLA', tiSlaText(ti))));
		clear(parts.details);
		parts.details.append(h('h3', {}, 'Rendered command'),
		h('pre', { class: 'dag-pre', 'data-testid': 'ti-command' }, ti.rendered_command || '—'),
		h('h3', {}, 'Outputs'), outputs || h('p', { class: 'dag-empty' }, 'None.'));
		let tries;
		try {
			const q = sel.mapIndex >= 0 ? { map_index: sel.mapIndex } : undefined;
			tries = (await api(tiPath(dagId, runId, taskId) + '/tries', { query: q }))
				.task_instances || [];
		} catch (e) {
			// an older server has no tries route (it reads "tries" as a map index: 400)
			if (e.status !== 404 && e.status !== 400)
				throw e;
			// no tries route: the tries up to the current one, the last with the TI's state
			tries = [];
			for (let n = 1; n <= ti.try_number; n++)
				tries.push(n === ti.try_number ? ti : { try_number: n, state: null });
		}
		if (my !== gen)
			return;
		tries = tries.filter((t) => t.try_number > 0).sort((a, b) => a.try_number - b.try_number);
		renderTry(ti, tries);
	}

	async function refreshRun(my) {
		const [run, alerts] = await Promise.all([api(runPath(dagId, sel.runId)),
			runAlerts(dagId, sel.runId)]);
		if (my !== gen)
			return;
		clear(parts.summary);
		parts.note.show(run.note, runPath(dagId, sel.runId));
		const conf = run.conf && Object.keys(run.conf).length
			? h('pre', { class: 'dag-pre', 'data-testid': 'run-conf' },
				JSON.stringify(run.conf, null, 2)) : h('p', { class: 'dag-empty' }, 'None.');
		const s = ms(run.start_date), e = ms(run.end_date);
		parts.summary.append(h('dl', { class: 'dag-fields' },
			field('State', stateBadge(stateName(run.state))),
			field('Type', run.run_type),
			field('Logical date', formatTime(run.logical_date)),
			field('Queued', run.queued_at ? formatTime(run.queued_at) : null),
			field('Started', run.start_date ? formatTime(run.start_date) : null),
			field('Ended', run.end_date ? formatTime(run.end_date) : null),
			field('Duration', s !== null ? formatDuration(((e ?? Date.now()) - s) / 1000) : null),
			field('Reason', run.reason || null)),
		h('h3', {}, 'Conf'), conf, alerts);
	}

	async function refresh() {
		if (!sel)
			return;
		const my = gen;
		try {
			await (sel.kind === 'ti' ? refreshTi(my) : refreshRun(my));
		} catch (e) {
			if (my === gen && parts) {
				clear(parts.summary);
				parts.summary.append(h('p', { class: 'dag-error', role: 'alert' },
					`Could not load: ${e.message}`));
			}
		}
	}

	return {
		el, showTi, showRun, refresh, close,
		isOpen: () => !!sel,
		selection: () => (sel ? { runId: sel.runId, taskId: sel.kind === 'ti' ? sel.taskId : null }
			: {}),
	};
}
