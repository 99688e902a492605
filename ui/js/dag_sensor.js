// A waiting sensor in the DAG views: a task instance up_for_reschedule (a sensor between pokes,
// holding no slot) shows since when it waits, how many pokes it made and what the last one
// found.  The server writes the last poke into the instance's reason ("poke 3: no file matches
// in/*.csv") and its start date is when the wait began.

import { formatTime, formatDuration } from './core.js';

export const WAITING = 'up_for_reschedule';

// {pokes, last} from a reason "poke N: ..."; null when it is none.
export function pokeOf(reason) {
	const m = /^poke (\d+): ?(.*)$/s.exec(reason || '');
	return m ? { pokes: Number(m[1]), last: m[2] } : null;
}

// "waiting since 12:00:05 (3m 2s), 7 pokes"; '' for an instance that is not waiting.
export function waitingText(ti, now = Date.now()) {
	if (!ti || ti.state !== WAITING)
		return '';
	const p = pokeOf(ti.reason);
	const since = ti.start_date ? Date.parse(ti.start_date) : NaN;
	let s = 'waiting';
	if (!Number.isNaN(since))
		s += ` since ${formatTime(ti.start_date)} (${formatDuration((now - since) / 1000)})`;
	if (p)
		s += `, ${p.pokes} poke${p.pokes === 1 ? '' : 's'}`;
	return s;
}

// The rows a waiting instance adds to the side panel: [name, value] pairs.
export function sensorFields(ti) {
	if (!ti || ti.state !== WAITING)
		return [];
	const p = pokeOf(ti.reason);
	return [
		['Waiting since', ti.start_date ? formatTime(ti.start_date) : null],
		['Pokes', p ? String(p.pokes) : '0'],
		['Last poke', p ? p.last : null],
	];
}
