// event_log.js: the event log page (#/events): who changed what, from where, when.  Newest
// first, 50 a page, filtered by event, owner and DAG; refreshed every 5 s on the first page
// (every minute on older ones).  Data: Airflow's GET /api/v1/eventLogs (docs/api.md, "Event log"); a record's `extra`
// (method, route, status, peer, field names) is shown as its parts, never as raw JSON.

import { api, formatTime, h, navigate, poll, route } from './core.js';

const PAGE = 50;

function parseExtra(text) {
	try {
		const o = JSON.parse(text || '{}');
		return o && typeof o === 'object' ? o : {};
	} catch (e) {
		return {};
	}
}

function statusCell(status) {
	if (typeof status !== 'number') return '—';
	// a refused or failed request is shown as such: it is recorded as an attempt
	return h('span', { class: status >= 400 ? 'error' : '', 'data-testid': 'event-status',
		title: status >= 400 ? 'refused or failed' : 'done' }, String(status));
}

// What the record names: the DAG, run and task (links into the DAG pages), or the job.
function targetCell(rec, extra) {
	const parts = [];
	if (rec.dag_id) {
		parts.push(h('a', { href: '#/dags/' + encodeURIComponent(rec.dag_id) }, rec.dag_id));
		if (rec.run_id) parts.push(' / ', h('span', { class: 'mono' }, rec.run_id));
		if (rec.task_id) parts.push(' / ', h('span', { class: 'mono' }, rec.task_id));
		if (rec.map_index !== null && rec.map_index !== undefined) parts.push(`[${rec.map_index}]`);
	}
	if (extra.job_id) parts.push(h('a', { href: '#/jobs/' + extra.job_id }, 'job ' + extra.job_id));
	for (const k of ['connection_id', 'variable_key', 'pool_name', 'username', 'token_name'])
		if (extra[k]) parts.push(h('span', { class: 'mono' }, `${k.replace('_', ' ')} ${extra[k]}`));
	return parts.length ? h('span', { class: 'event-target' }, parts) : '—';
}

function row(rec) {
	const extra = parseExtra(rec.extra);
	const fields = Array.isArray(extra.fields) && extra.fields.length ? extra.fields.join(', ') : '';
	return h('tr', { 'data-key': String(rec.event_log_id), 'data-testid': 'event-row-' + rec.event_log_id },
		h('td', { class: 'num' }, String(rec.event_log_id)),
		h('td', {}, formatTime(rec.when)),
		h('td', {}, h('span', { class: 'mono', 'data-testid': 'event-name' }, rec.event)),
		h('td', { 'data-testid': 'event-owner' }, rec.owner || h('span', { class: 'muted' }, 'not authenticated'),
			extra.token ? h('div', { class: 'muted', 'data-testid': 'event-token' }, 'token ' + extra.token) : null),
		h('td', { class: 'mono' }, extra.peer || '—'),
		h('td', {}, targetCell(rec, extra)),
		h('td', { class: 'wrap' }, h('span', { class: 'mono' }, `${extra.method || ''} ${extra.path || ''}`),
			fields ? h('div', { class: 'muted' }, 'fields: ' + fields) : null),
		h('td', {}, statusCell(extra.status)));
}

route('/events', (root, params, query) => {
	const offset = Math.max(0, parseInt(query.offset || '0', 10) || 0);
	const filters = { event: query.event || '', owner: query.owner || '', dag_id: query.dag_id || '' };
	const inputs = {};
	const form = h('form', { class: 'toolbar', 'data-testid': 'events-filter' },
		Object.keys(filters).map((k) => {
			inputs[k] = h('input', { id: 'events-' + k, name: k, value: filters[k], size: 18,
				'data-testid': 'events-filter-' + k, placeholder: k === 'event' ? 'api.post_dag_run' : '' });
			return [h('label', { for: 'events-' + k }, k.replace('_', ' ')), inputs[k]];
		}),
		h('button', { type: 'submit', class: 'btn small' }, 'Filter'));
	form.addEventListener('submit', (e) => {
		e.preventDefault();
		const q = Object.keys(inputs).filter((k) => inputs[k].value.trim())
			.map((k) => k + '=' + encodeURIComponent(inputs[k].value.trim()));
		navigate('/events' + (q.length ? '?' + q.join('&') : ''));
	});
	const tbody = h('tbody');
	const note = h('p', { class: 'muted', 'data-testid': 'events-empty', hidden: true },
		'No records: every request that changes something (a trigger, a kill, a connection added) is listed here.');
	const banner = h('p', { class: 'error', role: 'alert', 'data-testid': 'events-error', hidden: true });
	const pager = h('div', { class: 'toolbar', 'data-testid': 'events-pager' });
	const total = h('span', { class: 'muted', 'data-testid': 'events-total' });
	root.appendChild(h('section', { class: 'page', 'data-testid': 'events-page' },
		h('h1', {}, 'Event log'), banner, form,
		h('div', { class: 'table-wrap' },
			h('table', { class: 'data', 'data-testid': 'events-table' },
				h('caption', { class: 'muted', hidden: true }, 'Event log, newest first'),
				h('thead', {}, h('tr', {},
					['ID', 'When', 'Event', 'Who', 'From', 'What', 'Request', 'Status']
						.map((t) => h('th', { scope: 'col' }, t)))),
				tbody)),
		note, h('div', { class: 'toolbar' }, total, h('span', { class: 'spacer' }), pager)));

	function pageLink(label, to) {
		const q = Object.entries(filters).filter(([, v]) => v).map(([k, v]) => k + '=' + encodeURIComponent(v));
		if (to > 0) q.push('offset=' + to);
		return h('a', { href: '#/events' + (q.length ? '?' + q.join('&') : ''), class: 'btn small' }, label);
	}

	return poll(async () => {
		let body;
		try {
			body = await api('/api/v1/eventLogs', { query: {
				order_by: '-event_log_id', limit: PAGE, offset: offset || undefined,
				event: filters.event || undefined, owner: filters.owner || undefined,
				dag_id: filters.dag_id || undefined } });
			banner.hidden = true;
		} catch (e) {
			banner.textContent = 'Could not load the event log: ' + e.message;
			banner.hidden = false;
			throw e;
		}
		const recs = body.event_logs || [];
		note.hidden = recs.length > 0;
		tbody.replaceChildren(...recs.map(row));
		const n = body.total_entries || 0;
		total.textContent = n ? `${offset + 1}–${offset + recs.length} of ${n}` : '';
		pager.replaceChildren(...[offset > 0 ? pageLink('Newer', Math.max(0, offset - PAGE)) : null,
			offset + recs.length < n ? pageLink('Older', offset + PAGE) : null].filter(Boolean));
	}, offset ? 60000 : 5000);
});
