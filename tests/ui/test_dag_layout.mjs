// The graph tab's layout rules (ui/js/dag_graph.js layoutGraph), without a browser: a task's
// column is its longest path from a root, columns are ordered to avoid crossings, unknown
// edges are dropped and a cycle does not hang the page.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { layoutGraph } from '../../ui/js/dag_graph.js';

const T = (id, ...down) => ({ task_id: id, downstream_task_ids: down });

// Edges (u1,v1), (u2,v2) between two adjacent columns cross when their ends are in
// opposite orders.
function crossings(g) {
	let n = 0;
	const e = g.edges.map(([a, b]) => [g.nodes.get(a), g.nodes.get(b)]);
	for (let i = 0; i < e.length; i++)
		for (let j = i + 1; j < e.length; j++) {
			const [a1, b1] = e[i], [a2, b2] = e[j];
			if (a1.layer !== a2.layer || b1.layer !== b2.layer)
				continue;
			if ((a1.order - a2.order) * (b1.order - b2.order) < 0)
				n++;
		}
	return n;
}

test('columns are longest paths from the roots', () => {
	// a -> b -> c, and a -> c directly: c sits after b, not beside it
	const g = layoutGraph([T('a', 'b', 'c'), T('b', 'c'), T('c'), T('lone')]);
	assert.deepEqual(['a', 'b', 'c', 'lone'].map((id) => g.nodes.get(id).layer), [0, 1, 2, 0]);
	assert.equal(g.edges.length, 3);
	for (const [a, b] of g.edges)
		assert.ok(g.nodes.get(a).x < g.nodes.get(b).x, `${a} left of ${b}`);
	// nodes of one column do not overlap
	assert.notEqual(g.nodes.get('a').y, g.nodes.get('lone').y);
});

test('the order within columns removes crossings of two crossed chains', () => {
	// written so that file order crosses: x1 feeds y2, x2 feeds y1
	const g = layoutGraph([T('x1', 'y2'), T('x2', 'y1'), T('y1', 'z1'), T('y2', 'z2'),
		T('z1'), T('z2')]);
	assert.equal(crossings(g), 0);
});

test('unknown downstream ids are dropped; a cycle does not hang', () => {
	const g = layoutGraph([T('a', 'ghost', 'b'), T('b')]);
	assert.deepEqual(g.edges, [['a', 'b']]);
	const c = layoutGraph([T('p', 'q'), T('q', 'p'), T('r')]);
	assert.equal(c.nodes.size, 3);
	assert.ok(c.width > 0 && c.height > 0);
});

test('50 tasks in 5 chains: 10 columns of 5, no crossings', () => {
	const tasks = [];
	for (let i = 0; i < 50; i++)
		tasks.push(T('t' + i, ...(i + 5 < 50 ? ['t' + (i + 5)] : [])));
	const g = layoutGraph(tasks);
	const cols = new Map();
	for (const n of g.nodes.values())
		cols.set(n.layer, (cols.get(n.layer) || 0) + 1);
	assert.equal(cols.size, 10);
	assert.ok([...cols.values()].every((n) => n === 5));
	assert.equal(g.edges.length, 45);
	assert.equal(crossings(g), 0);
});
