// A run's notifications and SLA misses, shown in the run panel (weir's own routes:
// GET .../dagRuns/RUN/notifications and .../slaMisses), and a task instance's SLA miss as one
// line of its summary.  A delivery that failed says why; it never changed a task.

import { api, h, stateBadge, formatTime } from './core.js';
import { runPath } from './dag_util.js';

const DELIVERY_COLOUR = { sent: 'success', failed: 'failed', pending: 'queued' };

function who(n) {
	if (!n.task_id)
		return 'run';
	return n.map_index >= 0 ? `${n.task_id}[${n.map_index}]` : n.task_id;
}

function deliveryBadge(state) {
	// the states of a delivery, coloured as the task states they resemble
	const b = stateBadge(DELIVERY_COLOUR[state] || 'none');
	b.lastChild.textContent = state;
	b.dataset.state = state;
	return b;
}

// One item per delivery (the panel is narrow): who and what, its state and attempts, the
// target as the server masks it, and the last error or the next attempt's time.
function notificationsList(list) {
	if (!list.length)
		return h('p', { class: 'dag-empty' }, 'None sent.');
	return h('ul', { class: 'dag-notify-list', 'data-testid': 'run-notifications' },
		list.map((n) => h('li', { 'data-testid': `notification-${n.id}`, 'data-state': n.state },
			h('div', {}, h('strong', {}, who(n)), ` ${n.event.replace(/_/g, ' ')} `,
				deliveryBadge(n.state), ` ${n.attempts} of ${n.max_attempts} attempts`),
			h('div', { class: 'dag-notify-target' }, `${n.target_kind}: ${n.target}`),
			n.last_error || n.next_attempt_at
				? h('div', { class: 'dag-notify-error' }, n.last_error +
					(n.next_attempt_at ? ` (next attempt ${formatTime(n.next_attempt_at)})` : ''))
				: null)));
}

function slaList(list) {
	if (!list.length)
		return h('p', { class: 'dag-empty' }, 'None missed.');
	return h('ul', { class: 'dag-sla-misses', 'data-testid': 'run-sla-misses' },
		list.map((m) => h('li', { 'data-testid': `sla-miss-${m.task_id}` },
			h('strong', {}, m.map_index >= 0 ? `${m.task_id}[${m.map_index}]` : m.task_id),
			` missed its SLA: due ${formatTime(m.due_at)}, seen ${formatTime(m.recorded_at)}` +
			` while ${m.state_when_missed.replace(/_/g, ' ')}` +
			(m.notified ? '' : ' (not notified)'))));
}

// The two sections of a run's panel; a server without the routes shows nothing.
export async function runAlerts(dagId, runId) {
	const get = (leaf) => api(runPath(dagId, runId) + '/' + leaf, { query: { limit: 100 } })
		.catch(() => null);
	const [notes, misses] = await Promise.all([get('notifications'), get('slaMisses')]);
	const out = h('div', { class: 'dag-run-alerts' });
	if (misses)
		out.append(h('h3', {}, 'SLA misses'), slaList(misses.sla_misses || []));
	if (notes)
		out.append(h('h3', {}, 'Notifications'), notificationsList(notes.notifications || []));
	return out;
}

// The "SLA" line of a task instance's summary: null (no line) when it met its SLA or has none.
export function tiSlaText(ti) {
	const m = ti && ti.sla_miss;
	return m ? `missed (due ${formatTime(m.due_at)})` : null;
}
