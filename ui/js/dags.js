// The DAG pages: the list (#/dags) and a DAG's page (#/dags/ID) with its tabs (Grid, Graph,
// Gantt, Durations), the trigger form and pause/unpause. The tabs' drawing lives in
// dag_grid.js, dag_graph.js and dag_charts.js; this file owns the pages, their data and refresh.

import {
	api, h, clear, route, poll, stateBadge, legend, formatTime, toast, may, loadDagAbilities,
} from './core.js';
import {
	enc, dagPath, runPath, dagHash, stateColour, stateName, plainParams, paramSchemas, runLabel,
	runDurationSeconds,
} from './dag_util.js';
import { renderGrid, gridFromRuns, createPanel } from './dag_grid.js';
import { renderGraph } from './dag_graph.js';
import { renderGantt, renderDurations } from './dag_charts.js';

const REFRESH_MS = 2000;
const TABS = [['grid', 'Grid'], ['graph', 'Graph'], ['gantt', 'Gantt'], ['durations', 'Durations']];
const RUN_LIMITS = [10, 25, 50, 100, 365];
const TI_STATES = ['success', 'running', 'failed', 'queued', 'scheduled', 'up_for_retry', 'up_for_reschedule',
	'upstream_failed', 'skipped', 'removed', 'none'];

function scheduleText(dag) {
	const s = dag.schedule_interval;
	if (!s)
		return 'none';
	// a RelativeDelta has no value: its description is relativedelta's own text
	return typeof s === 'object' ? (s.value || dag.timetable_description || JSON.stringify(s)) : String(s);
}

// Sends is_paused and answers the DAG; the switch shows the server's answer.
async function setPaused(dagId, paused) {
	return api(dagPath(dagId), { method: 'PATCH', body: { is_paused: paused },
		query: { update_mask: 'is_paused' } });
}

// Whether this user may pause the DAG: the role (and, on the DAG's page, its access list, as
// /ui/me?dag_id says; in the list, the DAG's may_act).
function mayPause(dag) {
	return may('pause', dag.dag_id) && dag.may_act !== false;
}

// A labelled switch (a checkbox with role switch), checked while the DAG is paused.
function pauseSwitch(dag, onDone) {
	const id = 'pause-' + dag.dag_id;
	const box = h('input', { type: 'checkbox', role: 'switch', id, class: 'dag-switch',
		'data-testid': `pause-${dag.dag_id}`, 'aria-label': `Pause ${dag.dag_id}` });
	box.checked = !!dag.is_paused;
	if (!mayPause(dag)) {
		// shown, not changeable: this role may not pause (the server would refuse it)
		box.disabled = true;
		box.title = 'Your role may not pause or unpause DAGs';
	}
	box.addEventListener('change', async () => {
		const want = box.checked;
		box.disabled = true;
		try {
			const d = await setPaused(dag.dag_id, want);
			box.checked = !!d.is_paused;
			toast(`${dag.dag_id} ${d.is_paused ? 'paused' : 'unpaused'}`, 'success');
			if (onDone)
				onDone(d);
		} catch (e) {
			box.checked = !want;
			toast(`Could not ${want ? 'pause' : 'unpause'} ${dag.dag_id}: ${e.message}`, 'error');
		} finally {
			box.disabled = !mayPause(dag);
		}
	});
	return h('label', { class: 'dag-switch-label', for: id }, box,
		h('span', { class: 'dag-switch-text' }, 'Paused'));
}

// ---- the list ---------------------------------------------------------------------------------

// What /api/v1/ui/dags answers, from Airflow's routes when the server has no such route.
async function loadDagList() {
	try {
		return await api('/api/v1/ui/dags', { query: { limit: 1000 } });
	} catch (e) {
		if (e.status !== 404)
			throw e;
	}
	const [d, ie] = await Promise.all([api('/api/v1/dags', { query: { limit: 1000 } }),
		api('/api/v1/importErrors', { query: { limit: 1000 } })]);
	await Promise.all(d.dags.map(async (dag) => {
		const r = await api(dagPath(dag.dag_id) + '/dagRuns',
			{ query: { limit: 10, order_by: '-execution_date' } });
		dag.last_runs = r.dag_runs;
	}));
	return { dags: d.dags, import_errors: ie.import_errors };
}

function importErrorsEl(errors) {
	if (!errors || !errors.length)
		return null;
	return h('section', { class: 'dag-import-errors', 'data-testid': 'import-errors',
		'aria-label': 'Import errors' },
	h('h2', {}, `Import errors (${errors.length})`),
	h('ul', {}, errors.map((e) => {
		let line = e.line, msg = e.message || e.stack_trace || '';
		// the parser's message starts "FILE:LINE: " (Airflow's stack_trace too): the file and
		// line are shown apart, so that prefix goes; the line comes from it when not given
		const m = msg.startsWith(e.filename + ':')
			? /^:(?:(\d+):)?\s*([\s\S]*)$/.exec(msg.slice(e.filename.length)) : null;
		if (m) {
			line = line || m[1];
			msg = m[2];
		}
		return h('li', { class: 'dag-import-error', 'data-testid': 'import-error' },
			h('code', { class: 'dag-import-file', title: e.filename },
				e.filename.split('/').pop() + (line ? `:${line}` : '')), ' ',
			h('span', { class: 'dag-import-msg' }, msg));
	})));
}

// Last runs, oldest left, as coloured links to the run in the grid.
function runMarks(dag) {
	const runs = (dag.last_runs || []).slice();
	// the route answers newest first (Airflow's order for "last"); show time left to right
	runs.sort((a, b) => String(a.logical_date || a.start_date || '')
		.localeCompare(String(b.logical_date || b.start_date || '')));
	return h('span', { class: 'dag-run-marks', 'data-testid': `runs-${dag.dag_id}` },
		runs.map((r) => {
			const label = `${r.dag_run_id}: ${stateName(r.state)}`;
			const a = h('a', { class: 'dag-run-dot', href: dagHash(dag.dag_id,
				{ tab: 'grid', run: r.dag_run_id }), title: label, 'aria-label': label,
			'data-state': stateName(r.state) });
			a.style.background = stateColour(r.state);
			return a;
		}));
}

function lastRun(dag) {
	const runs = dag.last_runs || [];
	let last = null;
	for (const r of runs)
		if (!last || String(r.logical_date || '') > String(last.logical_date || ''))
			last = r;
	return last;
}

function dagRow(dag, reload) {
	const last = lastRun(dag);
	return h('tr', { 'data-testid': `dag-row-${dag.dag_id}` },
		h('td', {}, pauseSwitch(dag, reload)),
		h('td', { class: 'wrap' }, h('a', { href: dagHash(dag.dag_id), class: 'dag-link' },
			dag.dag_id),
		dag.description ? h('div', { class: 'muted dag-desc' }, dag.description) : null,
		(dag.tags || []).length ? h('div', { class: 'dag-tags' },
			dag.tags.map((t) => h('span', { class: 'dag-tag' }, t.name || t))) : null),
		h('td', {}, h('code', {}, scheduleText(dag))),
		h('td', {}, dag.next_dagrun ? formatTime(dag.next_dagrun) : '—'),
		h('td', {}, last ? h('a', { href: dagHash(dag.dag_id, { run: last.dag_run_id }) },
			stateBadge(stateName(last.state))) : '—',
		last ? h('div', { class: 'muted' }, formatTime(last.logical_date)) : null),
		h('td', {}, runMarks(dag)));
}

route('/dags', (root) => {
	const body = h('tbody');
	const errs = h('div');
	const status = h('p', { class: 'muted', 'data-testid': 'dags-status' }, 'Loading…');
	const table = h('div', { class: 'table-wrap' }, h('table', { class: 'data',
		'data-testid': 'dags-table' },
	h('thead', {}, h('tr', {}, ['Paused', 'DAG', 'Schedule', 'Next run', 'Last run',
		'Recent runs'].map((c) => h('th', { scope: 'col' }, c)))), body));
	root.appendChild(h('section', { class: 'page' }, h('h1', {}, 'DAGs'), errs, status, table,
		legend(['success', 'running', 'failed', 'queued'])));
	let last = '';
	const load = async () => {
		const data = await loadDagList();
		const key = JSON.stringify(data);
		if (key === last)
			return;	// nothing changed: leave focus and the switches alone
		last = key;
		const dags = (data.dags || []).slice().sort((a, b) => a.dag_id.localeCompare(b.dag_id));
		clear(body);
		for (const d of dags)
			body.appendChild(dagRow(d, () => { last = ''; }));
		clear(errs);
		const ie = importErrorsEl(data.import_errors);
		if (ie)
			errs.appendChild(ie);
		status.textContent = dags.length ? `${dags.length} DAG${dags.length === 1 ? '' : 's'}`
			: 'No DAGs: put DAG files in the server\'s DAG folder.';
	};
	const stop = poll(async () => {
		try {
			await load();
		} catch (e) {
			status.textContent = `Could not load the DAGs: ${e.message}`;
			status.className = 'error';
			throw e;
		}
	}, REFRESH_MS);
	return stop;
});

// ---- the trigger form -------------------------------------------------------------------------

// One input per param, following its schema (a select for an enum, a number input with the
// bounds for a number, a checkbox for a boolean, required ones marked), else typed by its
// default; a JSON editor of the whole conf kept in step with them. The conf is checked (JSON, an
// object) before it is sent; the server checks it against the schemas.
function paramKind(schema, v) {
	const types = [].concat(schema.type || []);
	if (Array.isArray(schema.enum))
		return 'enum';
	if (types.includes('boolean') || (!types.length && typeof v === 'boolean'))
		return 'boolean';
	if (types.some((t) => t === 'integer' || t === 'number') || (!types.length && typeof v === 'number'))
		return 'number';
	if (types.some((t) => t === 'array' || t === 'object') ||
	    (!types.length && v !== null && typeof v === 'object'))
		return 'json';
	return 'text';
}

function paramRequired(schema, v) {
	if (schema.required === true)
		return true;
	const types = [].concat(schema.type || []);
	return v === null && (types.length > 0 || Array.isArray(schema.enum)) && !types.includes('null');
}

function paramInput(id, kind, schema, v) {
	if (kind === 'enum') {
		const sel = h('select', { id, 'data-testid': id },
			...schema.enum.map((opt, i) => h('option', { value: String(i) },
				typeof opt === 'string' ? opt : JSON.stringify(opt))));
		const at = schema.enum.findIndex((o) => JSON.stringify(o) === JSON.stringify(v));
		if (at < 0)
			sel.prepend(h('option', { value: '' }, '(choose)'));
		sel.value = at < 0 ? '' : String(at);
		return sel;
	}
	if (kind === 'boolean') {
		const box = h('input', { id, type: 'checkbox', 'data-testid': id });
		box.checked = v === true;
		return box;
	}
	if (kind === 'number') {
		const types = [].concat(schema.type || []);
		const attrs = { id, type: 'number', 'data-testid': id,
			step: types.includes('integer') && !types.includes('number') ? '1' : 'any',
			value: v === null ? '' : String(v) };
		if (typeof schema.minimum === 'number')
			attrs.min = String(schema.minimum);
		if (typeof schema.maximum === 'number')
			attrs.max = String(schema.maximum);
		return h('input', attrs);
	}
	if (kind === 'json')
		return h('input', { id, type: 'text', 'data-testid': id, class: 'dag-json-input',
			value: v === null ? '' : JSON.stringify(v), 'aria-description': 'JSON' });
	const attrs = { id, type: 'text', 'data-testid': id, value: v === null ? '' : String(v) };
	if (typeof schema.minLength === 'number')
		attrs.minlength = String(schema.minLength);
	if (typeof schema.maxLength === 'number')
		attrs.maxlength = String(schema.maxLength);
	return h('input', attrs);
}

function triggerDialog(dag, params, onDone) {
	const defaults = plainParams(params);
	const schemas = paramSchemas(Object.assign({}, dag, { params }));
	const conf = h('textarea', { id: 'trigger-conf', rows: 8, spellcheck: 'false',
		class: 'dag-conf', 'data-testid': 'trigger-conf', 'aria-describedby': 'trigger-conf-err' });
	const err = h('p', { id: 'trigger-conf-err', class: 'error', role: 'alert',
		'data-testid': 'trigger-error', hidden: true });
	const runId = h('input', { id: 'trigger-run-id', type: 'text', 'data-testid': 'trigger-run-id',
		placeholder: 'manual__… (optional)' });
	const inputs = [];
	const fields = Object.entries(defaults).map(([name, v]) => {
		const id = 'param-' + name;
		const schema = schemas[name] || {};
		const kind = paramKind(schema, v);
		const required = paramRequired(schema, v);
		const input = paramInput(id, kind, schema, v);
		if (required)
			input.setAttribute('required', '');
		inputs.push({ name, v, kind, schema, input });
		const desc = schema.description || (typeof params[name] === 'object' && params[name] &&
			params[name].description) || '';
		return h('div', { class: 'dag-param' }, h('label', { for: id }, schema.title || name,
			schema.title ? h('span', { class: 'muted' }, ` (${name})`) : null,
			kind === 'json' ? h('span', { class: 'muted' }, ' (JSON)') : null,
			required ? h('span', { class: 'required', 'data-testid': id + '-required',
				'aria-label': 'required' }, ' *') : null),
		input, desc ? h('small', { class: 'muted' }, desc) : null);
	});

	const readParam = ({ kind, schema, input }) => {
		if (kind === 'enum')
			return input.value === '' ? null : schema.enum[Number(input.value)];
		if (kind === 'boolean')
			return input.checked;
		if (kind === 'number')
			return input.value === '' ? null : Number(input.value);
		if (kind === 'json')
			return input.value.trim() === '' ? null : JSON.parse(input.value);
		return input.value;
	};
	const showErr = (msg) => {
		err.textContent = msg;
		err.hidden = !msg;
		conf.setAttribute('aria-invalid', msg ? 'true' : 'false');
	};
	// The conf's text from the fields (keys the user added in the editor stay).
	const fieldsToConf = () => {
		let obj = {};
		try {
			const cur = JSON.parse(conf.value);
			if (cur && typeof cur === 'object' && !Array.isArray(cur))
				obj = cur;
		} catch (e) { /* the fields win */ }
		for (const p of inputs) {
			try {
				obj[p.name] = readParam(p);
			} catch (e) {
				showErr(`param ${p.name}: not valid JSON (${e.message})`);
				return;
			}
		}
		conf.value = JSON.stringify(obj, null, 2);
		showErr('');
	};
	// Parses the editor: the conf object, or null with the error shown.
	const parseConf = () => {
		let obj;
		try {
			obj = JSON.parse(conf.value.trim() === '' ? '{}' : conf.value);
		} catch (e) {
			showErr(`conf: not valid JSON: ${e.message}`);
			return null;
		}
		if (!obj || typeof obj !== 'object' || Array.isArray(obj)) {
			showErr('conf: expected a JSON object ({"name": value, ...})');
			return null;
		}
		showErr('');
		return obj;
	};
	for (const p of inputs)
		p.input.addEventListener(p.input.type === 'checkbox' || p.kind === 'enum' ? 'change' : 'input',
			fieldsToConf);
	conf.addEventListener('input', () => {
		const obj = parseConf();
		if (!obj)
			return;
		for (const p of inputs) {
			if (!(p.name in obj))
				continue;
			const val = obj[p.name];
			if (p.kind === 'enum') {
				const at = p.schema.enum.findIndex((o) => JSON.stringify(o) === JSON.stringify(val));
				p.input.value = at < 0 ? '' : String(at);
			} else if (p.input.type === 'checkbox')
				p.input.checked = !!val;
			else if (val !== null && typeof val === 'object')
				p.input.value = JSON.stringify(val);
			else
				p.input.value = val === null ? '' : String(val);
		}
	});
	conf.value = JSON.stringify(defaults, null, 2);

	const submit = h('button', { type: 'submit', class: 'btn primary',
		'data-testid': 'trigger-submit' }, 'Trigger');
	const cancel = h('button', { type: 'button', class: 'btn', 'data-testid': 'trigger-cancel' },
		'Cancel');
	const form = h('form', { method: 'dialog', class: 'dag-trigger-form', novalidate: true },
		h('h2', { id: 'trigger-title' }, `Trigger ${dag.dag_id}`),
		fields.length ? h('fieldset', {}, h('legend', {}, 'Params'), fields)
			: h('p', { class: 'muted' }, 'This DAG has no params.'),
		h('div', { class: 'dag-param' }, h('label', { for: 'trigger-conf' }, 'Conf (JSON)'), conf),
		err,
		h('div', { class: 'dag-param' }, h('label', { for: 'trigger-run-id' }, 'Run id'), runId),
		h('div', { class: 'actions' }, cancel, submit));
	const dlg = h('dialog', { class: 'dag-trigger', 'aria-labelledby': 'trigger-title',
		'data-testid': 'trigger-dialog' }, form);
	cancel.addEventListener('click', () => dlg.close());
	dlg.addEventListener('close', () => dlg.remove());
	form.addEventListener('submit', async (e) => {
		e.preventDefault();
		const obj = parseConf();
		if (!obj) {
			conf.focus();
			return;
		}
		const body = { conf: obj };
		if (runId.value.trim())
			body.dag_run_id = runId.value.trim();
		submit.disabled = true;
		try {
			const run = await api(dagPath(dag.dag_id) + '/dagRuns', { method: 'POST', body });
			toast(`Triggered ${run.dag_run_id}`, 'success');
			dlg.close();
			onDone(run);
		} catch (ex) {
			showErr(`The server refused the run: ${ex.message}`);
		} finally {
			submit.disabled = false;
		}
	});
	document.body.appendChild(dlg);
	dlg.showModal();
	(inputs.length ? inputs[0].input : conf).focus();
}

// ---- the DAG page -----------------------------------------------------------------------------

route('/dags/:dag_id', async (root, params, query) => {
	const dagId = params.dag_id;
	await loadDagAbilities(dagId);	// what this user may do here, before anything is drawn
	const st = {
		tab: TABS.some(([t]) => t === query.tab) ? query.tab : 'grid',
		run: query.run || null,		// the selected run (graph, gantt, run panel)
		limit: RUN_LIMITS.includes(Number(query.limit)) ? Number(query.limit) : 25,
		dag: null, tasks: null, grid: null, gridKey: '', stopped: false,
	};
	const title = h('h1', {}, h('span', { 'data-testid': 'dag-title' }, dagId));
	const info = h('div', { class: 'dag-info muted' });
	const pauseBox = h('span');
	const trigger = h('button', { type: 'button', class: 'btn primary',
		'data-testid': 'trigger-button' }, 'Trigger');
	const tabList = h('div', { class: 'dag-tabs', role: 'tablist', 'aria-label': 'Views' });
	const limitSel = h('select', { id: 'dag-run-limit', 'data-testid': 'run-limit' },
		RUN_LIMITS.map((n) => h('option', { value: String(n) }, String(n))));
	limitSel.value = String(st.limit);
	const runSel = h('select', { id: 'dag-run-pick', 'data-testid': 'run-picker' });
	const runPick = h('span', { class: 'dag-run-pick' },
		h('label', { for: 'dag-run-pick' }, 'Run '), runSel);
	const view = h('div', { class: 'dag-view', role: 'tabpanel', 'data-testid': 'dag-view' });
	const status = h('p', { class: 'muted', 'data-testid': 'dag-status', 'aria-live': 'polite' });
	const panel = createPanel(dagId, (changed) => {
		if (st.stopped)
			return;
		if (changed) {
			st.gridKey = '';	// a mark or clear: redraw at the next refresh
			refresh();
		} else {
			drawView(true);
		}
		updateUrl();
	});
	const legendEl = legend(TI_STATES);
	const page = h('section', { class: 'page dag-page' },
		h('p', { class: 'dag-crumbs' }, h('a', { href: '#/dags' }, 'DAGs'), ' / ', dagId),
		h('div', { class: 'dag-head' }, title,
			h('div', { class: 'toolbar' }, pauseBox, may('trigger', dagId) ? trigger : null)),
		info,
		h('div', { class: 'toolbar dag-toolbar' }, tabList, h('span', { class: 'spacer' }),
			h('label', { for: 'dag-run-limit' }, 'Runs '), limitSel, runPick),
		status, legendEl,
		h('div', { class: 'dag-body' }, view, panel.el));
	root.appendChild(page);

	function updateUrl() {
		const sel = panel.selection();
		const q = { tab: st.tab === 'grid' ? null : st.tab, run: sel.runId || st.run,
			limit: st.limit === 25 ? null : st.limit };
		const hash = dagHash(dagId, q);
		if (location.hash !== hash)
			history.replaceState(null, '', hash);
	}

	function drawTabs() {
		clear(tabList);
		for (const [key, label] of TABS) {
			const b = h('button', { type: 'button', role: 'tab', class: 'dag-tab',
				id: `tab-${key}`, 'aria-selected': st.tab === key ? 'true' : 'false',
				'aria-controls': 'dag-view', 'data-testid': `tab-${key}`,
				'on:click': () => {
					if (st.tab === key)
						return;
					st.tab = key;
					drawTabs();
					updateUrl();
					drawView(false);
					refresh();
				} }, label);
			tabList.appendChild(b);
		}
		runPick.hidden = st.tab === 'grid' || st.tab === 'durations';
	}

	function drawHead() {
		const d = st.dag;
		clear(pauseBox);
		pauseBox.appendChild(pauseSwitch(d, (nd) => {
			st.dag = Object.assign({}, st.dag, nd);
			drawHead();
		}));
		clear(info);
		info.append(d.description ? h('span', {}, d.description) : null,
			h('span', {}, 'Schedule: ', h('code', {}, scheduleText(d))),
			h('span', {}, 'Next run: ', d.next_dagrun ? formatTime(d.next_dagrun) : '—'),
			// the file's name; its whole path (the server's folder) on hover
			d.fileloc ? h('span', {}, 'File: ', h('code', { title: d.fileloc },
				d.fileloc.split('/').pop())) : null);
	}

	// The run the graph and Gantt show: the chosen one, else the newest.
	function selectedRun() {
		const runs = st.grid ? st.grid.runs : [];
		const id = panel.selection().runId || st.run;
		return runs.find((r) => r.dag_run_id === id) || runs[runs.length - 1] || null;
	}

	function drawRunPicker() {
		const runs = st.grid ? st.grid.runs : [];
		const cur = selectedRun();
		clear(runSel);
		for (const r of runs.slice().reverse())
			runSel.appendChild(h('option', { value: r.dag_run_id },
				`${runLabel(r)} · ${stateName(r.state)} · ${r.dag_run_id}`));
		if (cur)
			runSel.value = cur.dag_run_id;
	}

	function keepScroll(fn) {
		const box = view.querySelector('.dag-scroll');
		const pos = box ? [box.scrollLeft, box.scrollTop] : null;
		fn();
		const nb = view.querySelector('.dag-scroll');
		if (pos && nb) {
			nb.scrollLeft = pos[0];
			nb.scrollTop = pos[1];
		}
	}

	function gridView() {
		const sel = panel.selection();
		const g = st.grid;
		if (!g.runs.length)
			return h('p', { class: 'dag-empty' }, 'No runs yet: trigger one.');
		const box = h('div', { class: 'dag-scroll table-wrap' }, renderGrid(g, sel,
			(runId, taskId, isMapped) => panel.showTi(runId, taskId, isMapped),
			(runId) => {
				st.run = runId;
				panel.showRun(runId);
			}));
		return box;
	}

	function graphStates() {
		const run = selectedRun();
		if (!run)
			return null;
		const i = st.grid.runs.indexOf(run);
		const m = new Map();
		for (const t of st.grid.tasks) {
			const ti = (t.instances || [])[i];
			if (ti)
				m.set(t.task_id, { state: ti.state, count: ti.map_index_count || 0 });
		}
		return m;
	}

	async function drawGantt(my) {
		const run = selectedRun();
		if (!run)
			return h('p', { class: 'dag-empty' }, 'No runs yet: trigger one.');
		const r = await api(runPath(dagId, run.dag_run_id) + '/taskInstances',
			{ query: { limit: 1000 } });
		if (my !== drawSeq)
			return null;
		return h('div', { class: 'dag-scroll' }, renderGantt(r.task_instances,
			Math.max(360, view.clientWidth - 8)));
	}

	async function loadStats() {
		try {
			return await api(`/api/v1/ui/dags/${enc(dagId)}/stats`, { query: { limit: st.limit } });
		} catch (e) {
			if (e.status !== 404 || !st.grid)
				throw e;
		}
		// an older server: the same figures from the grid's runs
		const now = Date.now();
		const counts = {};
		const runs = st.grid.runs.map((r) => {
			counts[r.state] = (counts[r.state] || 0) + 1;
			return Object.assign({ duration_seconds: runDurationSeconds(r, now) }, r);
		});
		return { runs, counts };
	}

	let drawSeq = 0;
	let viewKey = '';
	// Draws the current tab from what is loaded. force: redraw even if the data did not change
	// (a new selection).
	async function drawView(force) {
		const my = ++drawSeq;
		if (!st.grid || !st.tasks)
			return;
		let el = null, key = '';
		if (st.tab === 'grid') {
			key = 'grid' + st.gridKey + JSON.stringify(panel.selection());
			if (!force && key === viewKey)
				return;
			el = gridView();
		} else if (st.tab === 'graph') {
			const run = selectedRun();
			key = 'graph' + st.gridKey + (run ? run.dag_run_id : '');
			if (!force && key === viewKey)
				return;
			el = h('div', { class: 'dag-scroll' }, st.tasks.length
				? renderGraph(st.tasks, graphStates(), (taskId) => {
					const r = selectedRun();
					const t = st.tasks.find((x) => x.task_id === taskId);
					if (r)
						panel.showTi(r.dag_run_id, taskId, !!(t && t.is_mapped));
				}) : h('p', { class: 'dag-empty' }, 'This DAG has no tasks.'));
		} else if (st.tab === 'gantt') {
			el = await drawGantt(my);
		} else {
			const stats = await loadStats();
			if (my !== drawSeq)
				return;
			el = renderDurations(stats, Math.max(360, view.clientWidth - 8), (runId) => {
				st.run = runId;
				panel.showRun(runId);
			});
		}
		if (my !== drawSeq || !el)
			return;
		viewKey = key;
		keepScroll(() => {
			clear(view);
			view.appendChild(el);
		});
		view.dataset.ready = st.tab;	// tests and the benchmark wait for this
		drawRunPicker();
	}

	async function loadGrid() {
		try {
			return await api(`/api/v1/ui/dags/${enc(dagId)}/grid`, { query: { limit: st.limit } });
		} catch (e) {
			if (e.status !== 404 || !st.dag)
				throw e;
			return gridFromRuns(dagId, st.limit, st.tasks);
		}
	}

	async function loadTasks() {
		try {
			return (await api(dagPath(dagId) + '/tasks')).tasks || [];
		} catch (e) {
			if (e.status !== 404 || !st.dag)
				throw e;
			return null;	// an older server: the grid's rows stand in (no edges)
		}
	}

	// One refresh at a time: a call while one runs asks for one more after it.
	let running = null, again = false;
	function refresh() {
		if (running) {
			again = true;
			return running;
		}
		running = (async () => {
			try {
				do {
					again = false;
					if (!st.stopped)
						await refreshOnce();
				} while (again);
			} finally {
				running = null;
			}
		})();
		return running;
	}

	let first = true;
	async function refreshOnce() {
		if (first) {
			// details has the params as declared; the DAG route has them too on older servers
			st.dag = await api(dagPath(dagId) + '/details').catch((e) => {
				if (e.status === 404)
					return api(dagPath(dagId));
				throw e;
			});
			drawHead();
			st.tasks = await loadTasks();
			first = false;
		} else {
			const d = await api(dagPath(dagId));
			if (d.is_paused !== st.dag.is_paused || d.next_dagrun !== st.dag.next_dagrun) {
				st.dag = Object.assign({}, st.dag, d);
				drawHead();
			}
		}
		const g = await loadGrid();
		if (!st.tasks)
			st.tasks = g.tasks.map((t) => ({ task_id: t.task_id, is_mapped: t.is_mapped,
				downstream_task_ids: [] }));
		st.grid = g;
		const key = JSON.stringify(g);
		const changed = key !== st.gridKey;
		st.gridKey = key;
		const done = g.runs.filter((r) => r.state === 'success' || r.state === 'failed').length;
		status.textContent = `${g.runs.length} run${g.runs.length === 1 ? '' : 's'} shown, ` +
			`${done} finished`;
		if (changed || st.tab === 'gantt' || st.tab === 'durations')
			await drawView(changed);
		if (panel.isOpen())
			await panel.refresh();
	}

	trigger.addEventListener('click', () => {
		if (!st.dag)
			return;
		triggerDialog(st.dag, st.dag.params, (run) => {
			st.run = run.dag_run_id;
			st.gridKey = '';
			updateUrl();
			refresh();
		});
	});
	limitSel.addEventListener('change', () => {
		st.limit = Number(limitSel.value);
		updateUrl();
		refresh();
	});
	runSel.addEventListener('change', () => {
		st.run = runSel.value;
		if (panel.isOpen())
			panel.close();
		updateUrl();
		drawView(true);
	});

	drawTabs();
	const stop = poll(async () => {
		try {
			await refresh();
		} catch (e) {
			status.textContent = `Could not load: ${e.message}`;
			throw e;
		}
	}, REFRESH_MS);
	// a run named in the URL (a link from the list) opens in the panel
	if (query.run && st.tab === 'grid')
		panel.showRun(query.run);
	return () => {
		st.stopped = true;
		stop();
		panel.close();
	};
});
