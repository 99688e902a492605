// dag_flow.js: how a task shapes its run's flow, in the DAG pages: a mark on the graph's
// node of a branch or short-circuit task, and the words for its title (docs/dags.md,
// "Branches, short circuits and the past").  Skipped tasks need nothing here: a skipped
// instance has its state's colour, as every state does.
import { svg } from './dag_util.js';

// The words a node's title gets for task `t` (a Task object of /dags/{id}/tasks).
export function flowWords(t) {
	const words = [];
	if (t.branch) words.push('branch: chooses its downstream');
	if (t.short_circuit) words.push('short circuit: a false result skips its downstream');
	if (t.wait_for_downstream) words.push('waits for the previous run (and its downstream)');
	else if (t.depends_on_past) words.push('waits for the previous run');
	return words.length ? ', ' + words.join(', ') : '';
}

// The node's mark (an SVG group at its top left), or null for a plain task.
export function flowMark(t) {
	// letters, not symbols: every font has them (the title says what they mean)
	const sign = t.branch ? 'B' : t.short_circuit ? 'S' : t.depends_on_past ? 'P' : '';
	if (!sign) return null;
	const kind = t.branch ? 'branch' : t.short_circuit ? 'short_circuit' : 'past';
	return svg('g', { class: `dag-node-flow dag-node-flow-${kind}`, transform: 'translate(-8,-8)',
		'data-testid': `graph-flow-${t.task_id}` },
	svg('rect', { width: 18, height: 18, rx: 9 }),
	svg('text', { x: 9, y: 13, 'text-anchor': 'middle' }, sign));
}
