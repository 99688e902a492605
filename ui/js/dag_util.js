// Small helpers shared by the DAG pages: API paths, state colours, SVG elements.
// Kept apart from core.js so that the DAG pages can grow without touching the shared core.

import { stateColour as coreColour } from './core.js';

const SVG_NS = 'http://www.w3.org/2000/svg';

export const enc = encodeURIComponent;

// The Airflow-compatible path of a DAG, a run, a task instance.
export function dagPath(dagId) {
	return '/api/v1/dags/' + enc(dagId);
}

export function runPath(dagId, runId) {
	return dagPath(dagId) + '/dagRuns/' + enc(runId);
}

export function tiPath(dagId, runId, taskId) {
	return runPath(dagId, runId) + '/taskInstances/' + enc(taskId);
}

// The hash of the DAG page, with its tab and selected run kept in the query.
export function dagHash(dagId, query) {
	const q = new URLSearchParams();
	for (const [k, v] of Object.entries(query || {}))
		if (v !== undefined && v !== null && v !== '')
			q.set(k, v);
	const s = q.toString();
	return '#/dags/' + enc(dagId) + (s ? '?' + s : '');
}

// Airflow shows a task instance without a state as "none" (no state yet).
export function stateName(state) {
	return state ? String(state) : 'none';
}

export function stateColour(state) {
	return coreColour(state);
}

// An SVG element: attrs as attributes (numbers written as they are), children as nodes or text.
export function svg(tag, attrs, ...children) {
	const el = document.createElementNS(SVG_NS, tag);
	for (const [k, v] of Object.entries(attrs || {}))
		if (v !== undefined && v !== null && v !== false)
			el.setAttribute(k, String(v));
	for (const c of children.flat()) {
		if (c === undefined || c === null || c === false)
			continue;
		el.appendChild(typeof c === 'string' || typeof c === 'number'
			? document.createTextNode(String(c)) : c);
	}
	return el;
}

// Milliseconds since 1970 of an ISO date, or null.
export function ms(iso) {
	if (!iso)
		return null;
	const t = Date.parse(iso);
	return Number.isNaN(t) ? null : t;
}

// The DAG's params as plain values: the DAG route gives them plain, Airflow's DAGDetail wraps
// each in {"__class": ..., "value": ...}; both are read.
export function plainParams(params) {
	const out = {};
	for (const [k, v] of Object.entries(params || {})) {
		if (v && typeof v === 'object' && !Array.isArray(v) && '__class' in v && 'value' in v)
			out[k] = v.value;
		else
			out[k] = v;
	}
	return out;
}

// Each param's JSON Schema: Airflow's DAGDetail carries it in {"__class", "value", "schema"};
// weir's DAG route in param_schemas. {} for a param without one.
export function paramSchemas(dag) {
	const out = {};
	for (const [k, v] of Object.entries((dag && dag.params) || {})) {
		if (v && typeof v === 'object' && !Array.isArray(v) && '__class' in v && v.schema)
			out[k] = v.schema;
		else
			out[k] = (dag.param_schemas && dag.param_schemas[k]) || {};
	}
	return out;
}

// A short label of a run for column headers and pickers: its logical date, else its id.
export function runLabel(run) {
	const d = run.logical_date || run.start_date || run.queued_at;
	if (!d)
		return run.dag_run_id;
	return d.replace('T', ' ').replace(/(\.\d+)?(Z|[+-]00:00)$/, '').slice(0, 16);
}

export function runDurationSeconds(run, now) {
	const s = ms(run.start_date);
	if (s === null)
		return null;
	const e = ms(run.end_date);
	return ((e === null ? now : e) - s) / 1000;
}

// A light or dark label on a state colour: black on light colours, white on dark ones.
export function textColour(bg) {
	const m = /^#([0-9a-f]{6})$/i.exec(bg || '');
	if (!m)
		return '#000';
	const n = parseInt(m[1], 16);
	const lum = 0.299 * (n >> 16) + 0.587 * ((n >> 8) & 255) + 0.114 * (n & 255);
	return lum < 140 ? '#fff' : '#000';
}
