// The Datasets page (#/datasets): every dataset the DAG files name, the tasks that update it
// (their outlets), the DAGs it triggers (scheduled on it) with how many of their datasets are
// queued since their last dataset run, and the latest events with the runs they started. A
// form announces an update (POST /api/v1/datasets/events), as an outside system would.

import { api, h, clear, route, poll, stateBadge, formatTime, toast, may } from './core.js';
import { dagHash, dagPath, stateName } from './dag_util.js';

const REFRESH_MS = 3000;
const EVENTS_SHOWN = 25;

// The queued entries of a DAG: its route answers 404 when nothing is queued.
async function queuedOf(dagId) {
	try {
		const q = await api(dagPath(dagId) + '/datasets/queuedEvent');
		return (q.datasets || []).map((e) => e.uri);
	} catch (e) {
		if (e.status === 404)
			return [];
		throw e;
	}
}

function dagLink(dagId, text) {
	return h('a', { href: dagHash(dagId), class: 'dag-link' }, text || dagId);
}

function sourceOf(ev) {
	if (!ev.source_dag_id)
		return h('span', { class: 'muted' }, 'announced over REST');
	return h('span', {}, dagLink(ev.source_dag_id), ' · ',
		h('a', { href: dagHash(ev.source_dag_id, { run: ev.source_run_id }) }, ev.source_run_id),
		' · ', h('code', {}, ev.source_task_id +
			(ev.source_map_index >= 0 ? `[${ev.source_map_index}]` : '')));
}

// For each DAG on datasets: its URIs (from the datasets' consuming_dags) and what is queued.
function consumers(datasets) {
	const by = new Map();
	for (const d of datasets)
		for (const c of d.consuming_dags || []) {
			if (!by.has(c.dag_id))
				by.set(c.dag_id, []);
			by.get(c.dag_id).push(d.uri);
		}
	return by;
}

function triggersCell(d, needs, queued) {
	const dags = d.consuming_dags || [];
	if (!dags.length)
		return h('span', { class: 'muted' }, 'none');
	return h('ul', { class: 'ds-list' }, dags.map((c) => {
		const uris = needs.get(c.dag_id) || [];
		const have = (queued.get(c.dag_id) || []);
		const mine = have.includes(d.uri);
		return h('li', { 'data-testid': `ds-consumer-${c.dag_id}` }, dagLink(c.dag_id),
			h('span', { class: 'muted' }, ` ${have.filter((u) => uris.includes(u)).length} of ` +
				`${uris.length} updated${mine ? ' (this one queued)' : ''}`));
	}));
}

function datasetRow(d, needs, queued, latest) {
	const producers = d.producing_tasks || [];
	return h('tr', { 'data-testid': `ds-row-${d.uri}` },
		h('td', { class: 'wrap' }, h('code', {}, d.uri)),
		h('td', {}, producers.length ? h('ul', { class: 'ds-list' }, producers.map((p) =>
			h('li', {}, dagLink(p.dag_id), ' · ', h('code', {}, p.task_id))))
			: h('span', { class: 'muted' }, 'none (outside updates only)')),
		h('td', {}, triggersCell(d, needs, queued)),
		h('td', {}, latest ? formatTime(latest.timestamp) : '—'));
}

function eventRow(ev) {
	const runs = ev.created_dagruns || [];
	return h('tr', { 'data-testid': 'ds-event' },
		h('td', {}, formatTime(ev.timestamp)),
		h('td', { class: 'wrap' }, h('code', {}, ev.dataset_uri)),
		h('td', {}, sourceOf(ev)),
		h('td', { class: 'wrap' }, ev.extra && Object.keys(ev.extra).length
			? h('code', {}, JSON.stringify(ev.extra)) : '—'),
		h('td', { class: 'wrap' }, runs.length ? h('ul', { class: 'ds-list' }, runs.map((r) => h('li', {},
			h('a', { href: dagHash(r.dag_id, { run: r.run_id }) }, `${r.dag_id} · ${r.run_id}`),
			' ', stateBadge(stateName(r.state))))) : h('span', { class: 'muted' }, 'none')));
}

function announceForm(datasets, onDone) {
	const sel = h('select', { id: 'ds-announce-uri', 'data-testid': 'ds-announce-uri' },
		datasets.map((d) => h('option', { value: d.uri }, d.uri)));
	const extra = h('input', { id: 'ds-announce-extra', type: 'text', placeholder: '{"rows": 12}',
		'data-testid': 'ds-announce-extra', 'aria-label': 'Extra (a JSON object)' });
	const btn = h('button', { type: 'submit', class: 'btn primary', 'data-testid': 'ds-announce' },
		'Announce an update');
	const form = h('form', { class: 'toolbar ds-announce' },
		h('label', { for: 'ds-announce-uri' }, 'Dataset '), sel,
		h('label', { for: 'ds-announce-extra' }, ' extra '), extra, btn);
	form.addEventListener('submit', async (e) => {
		e.preventDefault();
		let body;
		try {
			body = { dataset_uri: sel.value };
			if (extra.value.trim())
				body.extra = JSON.parse(extra.value);
		} catch (err) {
			toast(`extra: not JSON: ${err.message}`, 'error');
			return;
		}
		btn.disabled = true;
		try {
			const ev = await api('/api/v1/datasets/events', { method: 'POST', body });
			const runs = (ev.created_dagruns || []).map((r) => r.dag_id).join(', ');
			toast(`${ev.dataset_uri} updated${runs ? `: started ${runs}` : ''}`, 'success');
			extra.value = '';
			onDone();
		} catch (err) {
			toast(`Could not announce the update: ${err.message}`, 'error');
		} finally {
			btn.disabled = false;
		}
	});
	return form;
}

route('/datasets', (root) => {
	const status = h('p', { class: 'muted', 'data-testid': 'datasets-status' }, 'Loading…');
	const form = h('div');
	const body = h('tbody');
	const events = h('tbody');
	root.appendChild(h('section', { class: 'page' }, h('h1', {}, 'Datasets'), status, form,
		h('div', { class: 'table-wrap' }, h('table', { class: 'data', 'data-testid': 'datasets-table' },
			h('thead', {}, h('tr', {}, ['Dataset', 'Updated by', 'Triggers', 'Last update']
				.map((c) => h('th', { scope: 'col' }, c)))), body)),
		h('h2', {}, 'Latest events'),
		h('div', { class: 'table-wrap' }, h('table', { class: 'data', 'data-testid': 'ds-events' },
			h('thead', {}, h('tr', {}, ['Time', 'Dataset', 'Source', 'Extra', 'Runs started']
				.map((c) => h('th', { scope: 'col' }, c)))), events))));
	let last = '', formFor = '';
	const load = async () => {
		const [ds, evs] = await Promise.all([
			api('/api/v1/datasets', { query: { limit: 1000, order_by: 'uri' } }),
			api('/api/v1/datasets/events', { query: { limit: EVENTS_SHOWN, order_by: '-timestamp' } }),
		]);
		const datasets = ds.datasets || [];
		const needs = consumers(datasets);
		const queued = new Map();
		await Promise.all([...needs.keys()].map(async (id) => queued.set(id, await queuedOf(id))));
		const key = JSON.stringify([ds, evs, [...queued]]);
		if (key === last)
			return;
		last = key;
		const latest = new Map();
		for (const ev of evs.dataset_events || [])
			if (!latest.has(ev.dataset_uri))
				latest.set(ev.dataset_uri, ev);
		clear(body);
		for (const d of datasets)
			body.appendChild(datasetRow(d, needs, queued, latest.get(d.uri)));
		clear(events);
		for (const ev of evs.dataset_events || [])
			events.appendChild(eventRow(ev));
		const uris = datasets.map((d) => d.uri).join('\n');
		if (uris !== formFor) { // keep the form (and what is typed) while the list is the same
			formFor = uris;
			clear(form);
			if (datasets.length && may('dataset_event'))	// an Op's: the server checks it too
				form.appendChild(announceForm(datasets, () => { last = ''; }));
		}
		status.className = 'muted';
		status.textContent = datasets.length
			? `${datasets.length} dataset${datasets.length === 1 ? '' : 's'}, ` +
			  `${evs.total_entries} event${evs.total_entries === 1 ? '' : 's'}`
			: 'No datasets: a DAG file names one in a task\'s outlets or a schedule: [URI, ...].';
	};
	return poll(async () => {
		try {
			await load();
		} catch (e) {
			status.textContent = `Could not load the datasets: ${e.message}`;
			status.className = 'error';
			throw e;
		}
	}, REFRESH_MS);
});


