// The Gantt tab (one run's task instances on one time axis) and the Durations tab (the last
// runs' durations as bars, with the counts of successful and failed runs), both plain SVG.

import { h, formatDuration, formatTime } from './core.js';
import { svg, stateColour, stateName, ms, runLabel } from './dag_util.js';

const LABEL_W = 170, ROW_H = 24, BAR_H = 16, AXIS_H = 26, RIGHT_PAD = 20;

// Round tick steps for an axis of `span` (ms or s) with at most ~8 ticks.
function tickStep(span) {
	const steps = [1, 2, 5, 10, 15, 30, 60, 120, 300, 600, 900, 1800, 3600, 7200, 21600,
		43200, 86400, 172800, 604800];
	const s = span / 8;
	for (const v of steps)
		if (v >= s)
			return v;
	return steps[steps.length - 1] * Math.ceil(s / steps[steps.length - 1]);
}

function shortTime(t) {
	const d = new Date(t);
	return d.toISOString().slice(11, 19);
}

// tis: the run's TaskInstances (Airflow's objects: task_id, map_index, state, queued_when,
// start_date, end_date). Instances that never queued have no bar but keep their row.
export function renderGantt(tis, width) {
	const now = Date.now();
	const rows = tis.slice().sort((a, b) =>
		(ms(a.queued_when) ?? ms(a.start_date) ?? Infinity) -
		(ms(b.queued_when) ?? ms(b.start_date) ?? Infinity) ||
		a.task_id.localeCompare(b.task_id) || a.map_index - b.map_index);
	let t0 = Infinity, t1 = -Infinity;
	for (const ti of rows) {
		for (const v of [ms(ti.queued_when), ms(ti.start_date), ms(ti.end_date)])
			if (v !== null) {
				t0 = Math.min(t0, v);
				t1 = Math.max(t1, v);
			}
		if (ms(ti.start_date) !== null && ms(ti.end_date) === null)
			t1 = Math.max(t1, now);
	}
	if (t0 === Infinity)
		return h('p', { class: 'dag-empty', 'data-testid': 'gantt-empty' },
			'No task of this run has been queued yet.');
	if (t1 - t0 < 1000)
		t1 = t0 + 1000;
	const plotW = Math.max(200, width - LABEL_W - RIGHT_PAD);
	const x = (t) => LABEL_W + ((t - t0) / (t1 - t0)) * plotW;
	const height = AXIS_H + rows.length * ROW_H + 4;
	const root = svg('svg', {
		class: 'dag-gantt', width: LABEL_W + plotW + RIGHT_PAD, height, role: 'img',
		'aria-label': `Gantt chart of ${rows.length} task instances`,
		'data-testid': 'dag-gantt',
	});
	const step = tickStep((t1 - t0) / 1000) * 1000;
	for (let t = Math.ceil(t0 / step) * step; t <= t1; t += step) {
		root.appendChild(svg('line', { x1: x(t), x2: x(t), y1: AXIS_H - 4, y2: height,
			class: 'dag-grid-line' }));
		root.appendChild(svg('text', { x: x(t), y: AXIS_H - 9, 'text-anchor': 'middle',
			class: 'dag-axis-label' }, shortTime(t)));
	}
	rows.forEach((ti, i) => {
		const y = AXIS_H + i * ROW_H;
		const name = ti.map_index >= 0 ? `${ti.task_id}[${ti.map_index}]` : ti.task_id;
		root.appendChild(svg('text', { x: 4, y: y + BAR_H - 2, class: 'dag-gantt-label' },
			name.length > 24 ? name.slice(0, 23) + '…' : name));
		const q = ms(ti.queued_when), s = ms(ti.start_date);
		const e = ms(ti.end_date) ?? (s !== null ? now : null);
		const colour = stateColour(ti.state);
		const tip = `${name}: ${stateName(ti.state)}` +
			(q !== null ? `\nqueued ${formatTime(ti.queued_when)}` : '') +
			(s !== null ? `\nstarted ${formatTime(ti.start_date)}` : '') +
			(ti.end_date ? `\nended ${formatTime(ti.end_date)}` : '') +
			(q !== null && s !== null ? `\nwaited ${formatDuration((s - q) / 1000)}` : '') +
			(s !== null ? `\nran ${formatDuration((e - s) / 1000)}` : '');
		const g = svg('g', { 'data-testid': `gantt-row-${name}`, tabindex: 0, role: 'img',
			'aria-label': tip.replace(/\n/g, ', ') }, svg('title', {}, tip));
		if (q !== null) {
			const qe = s !== null ? s : (e !== null ? e : now);
			g.appendChild(svg('rect', { x: x(q), y: y + 1, height: BAR_H,
				width: Math.max(1, x(qe) - x(q)), fill: colour, class: 'dag-gantt-queued',
				'data-testid': `gantt-queued-${name}` }));
		}
		if (s !== null)
			g.appendChild(svg('rect', { x: x(s), y: y + 1, height: BAR_H,
				width: Math.max(2, x(e) - x(s)), fill: colour, class: 'dag-gantt-bar',
				'data-testid': `gantt-bar-${name}` }));
		root.appendChild(g);
	});
	return h('div', { class: 'dag-chart-wrap' }, root);
}

// stats: {runs: [{dag_run_id, state, start_date, end_date, duration_seconds}] oldest first,
// counts: {state: n}}.
export function renderDurations(stats, width, onSelect) {
	const runs = stats.runs || [];
	const counts = stats.counts || {};
	const countEl = h('p', { class: 'dag-counts', 'data-testid': 'duration-counts' },
		h('span', { class: 'dag-count-ok' }, `${counts.success || 0} successful`), ', ',
		h('span', { class: 'dag-count-bad' }, `${counts.failed || 0} failed`),
		Object.entries(counts).filter(([k]) => k !== 'success' && k !== 'failed')
			.map(([k, v]) => `, ${v} ${k}`),
		` runs in all; the last ${runs.length} below`);
	if (!runs.length)
		return h('div', {}, countEl, h('p', { class: 'dag-empty' }, 'No runs yet.'));
	const H = 220, left = 56, bottom = 40, top = 10;
	const maxD = Math.max(1, ...runs.map((r) => r.duration_seconds || 0));
	const plotW = Math.max(200, width - left - RIGHT_PAD);
	const bw = Math.max(3, Math.min(40, plotW / runs.length - 2));
	const y = (d) => top + (H - top - bottom) * (1 - d / maxD);
	const root = svg('svg', { class: 'dag-durations', width: left + plotW + RIGHT_PAD,
		height: H, role: 'img', 'data-testid': 'dag-durations',
		'aria-label': `Durations of the last ${runs.length} runs, longest ${formatDuration(maxD)}` });
	const step = tickStep(maxD);
	for (let d = 0; d <= maxD; d += step) {
		root.appendChild(svg('line', { x1: left, x2: left + plotW, y1: y(d), y2: y(d),
			class: 'dag-grid-line' }));
		root.appendChild(svg('text', { x: left - 4, y: y(d) + 4, 'text-anchor': 'end',
			class: 'dag-axis-label' }, formatDuration(d)));
	}
	runs.forEach((r, i) => {
		const d = r.duration_seconds || 0;
		const bx = left + i * (plotW / runs.length) + 1;
		const tip = `${r.dag_run_id}: ${stateName(r.state)}, ` +
			(r.duration_seconds === null || r.duration_seconds === undefined
				? 'not started' : formatDuration(d)) +
			(r.start_date ? `, started ${formatTime(r.start_date)}` : '');
		const bar = svg('rect', { x: bx, y: y(d), width: bw, height: Math.max(1, y(0) - y(d)),
			fill: stateColour(r.state), class: 'dag-duration-bar', tabindex: 0, role: 'button',
			'aria-label': tip, 'data-testid': `duration-bar-${r.dag_run_id}` },
		svg('title', {}, tip));
		if (onSelect) {
			bar.addEventListener('click', () => onSelect(r.dag_run_id));
			bar.addEventListener('keydown', (e) => {
				if (e.key === 'Enter')
					onSelect(r.dag_run_id);
			});
		}
		root.appendChild(bar);
	});
	const first = runs[0], last = runs[runs.length - 1];
	root.appendChild(svg('text', { x: left, y: H - 8, class: 'dag-axis-label' },
		runLabel(first)));
	if (runs.length > 1)
		root.appendChild(svg('text', { x: left + plotW, y: H - 8, 'text-anchor': 'end',
			class: 'dag-axis-label' }, runLabel(last)));
	return h('div', { class: 'dag-chart-wrap' }, countEl, root);
}
