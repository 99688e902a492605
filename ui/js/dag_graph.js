// The Graph tab: the DAG's tasks laid out left to right as SVG, coloured by one run's states.
// layoutGraph is pure (no DOM) so that its rules are easy to follow: a task's column is its
// longest path from a root; within a column tasks are ordered by the mean position of their
// neighbours (a few sweeps each way), which removes most edge crossings in pipeline-shaped DAGs.

import { h } from './core.js';
import { svg, stateColour, stateName, textColour } from './dag_util.js';
import { flowMark, flowWords } from './dag_flow.js';

const NODE_W = 170, NODE_H = 38, COL_GAP = 70, ROW_GAP = 18, PAD = 16;

// tasks: [{task_id, downstream_task_ids}] -> {nodes: Map id -> {layer, order, x, y}, edges,
// width, height}. Edges that name an unknown task are left out.
export function layoutGraph(tasks) {
	const ids = tasks.map((t) => t.task_id);
	const known = new Set(ids);
	const down = new Map(ids.map((id) => [id, []]));
	const up = new Map(ids.map((id) => [id, []]));
	const edges = [];
	for (const t of tasks)
		for (const d of t.downstream_task_ids || []) {
			if (!known.has(d))
				continue;
			down.get(t.task_id).push(d);
			up.get(d).push(t.task_id);
			edges.push([t.task_id, d]);
		}

	// Longest path from the roots, in topological order (Kahn); the file is checked for
	// cycles when read, but a cycle here must not hang the page: such tasks stay in column 0.
	const layer = new Map(ids.map((id) => [id, 0]));
	const indeg = new Map(ids.map((id) => [id, up.get(id).length]));
	const queue = ids.filter((id) => indeg.get(id) === 0);
	for (let i = 0; i < queue.length; i++) {
		const id = queue[i];
		for (const d of down.get(id)) {
			layer.set(d, Math.max(layer.get(d), layer.get(id) + 1));
			indeg.set(d, indeg.get(d) - 1);
			if (indeg.get(d) === 0)
				queue.push(d);
		}
	}

	const nlayers = Math.max(0, ...layer.values()) + 1;
	const cols = Array.from({ length: nlayers }, () => []);
	for (const id of ids)	// file order first: stable and what the author wrote
		cols[layer.get(id)].push(id);
	const pos = new Map();
	const setPos = () => cols.forEach((c) => c.forEach((id, i) => pos.set(id, i)));
	setPos();
	const bary = (id, nbrs) => {
		const p = nbrs.get(id).map((n) => pos.get(n));
		return p.length ? p.reduce((a, b) => a + b, 0) / p.length : pos.get(id);
	};
	for (let sweep = 0; sweep < 4; sweep++) {
		const fwd = sweep % 2 === 0;
		const order = fwd ? cols.keys() : [...cols.keys()].reverse();
		for (const li of order) {
			const nbrs = fwd ? up : down;
			const key = new Map(cols[li].map((id) => [id, bary(id, nbrs)]));
			cols[li].sort((a, b) => key.get(a) - key.get(b) || pos.get(a) - pos.get(b));
			cols[li].forEach((id, i) => pos.set(id, i));
		}
	}

	const tallest = Math.max(1, ...cols.map((c) => c.length));
	const height = PAD * 2 + tallest * NODE_H + (tallest - 1) * ROW_GAP;
	const nodes = new Map();
	cols.forEach((c, li) => {
		// centre each column vertically so that short columns sit between their neighbours
		const colH = c.length * NODE_H + (c.length - 1) * ROW_GAP;
		const y0 = (height - colH) / 2;
		c.forEach((id, i) => nodes.set(id, {
			layer: li, order: i,
			x: PAD + li * (NODE_W + COL_GAP),
			y: y0 + i * (NODE_H + ROW_GAP),
		}));
	});
	return {
		nodes, edges,
		width: PAD * 2 + nlayers * NODE_W + (nlayers - 1) * COL_GAP,
		height,
	};
}

function edgePath(a, b) {
	const x1 = a.x + NODE_W, y1 = a.y + NODE_H / 2, x2 = b.x - 2, y2 = b.y + NODE_H / 2;
	const mx = (x1 + x2) / 2;
	return `M${x1},${y1} C${mx},${y1} ${mx},${y2} ${x2},${y2}`;
}

// The Graph tab's SVG. states: Map task_id -> {state, count} of the selected run (count: the
// instances of a foreach task), or null when no run is selected.
export function renderGraph(tasks, states, onSelect) {
	const g = layoutGraph(tasks);
	const byId = new Map(tasks.map((t) => [t.task_id, t]));
	const root = svg('svg', {
		class: 'dag-graph', width: g.width, height: g.height,
		viewBox: `0 0 ${g.width} ${g.height}`, role: 'img',
		'aria-label': `Dependency graph: ${tasks.length} tasks, ${g.edges.length} edges`,
		'data-testid': 'dag-graph',
	});
	root.appendChild(svg('defs', {},
		svg('marker', {
			id: 'dag-arrow', viewBox: '0 0 10 10', refX: 9, refY: 5,
			markerWidth: 7, markerHeight: 7, orient: 'auto-start-reverse',
		}, svg('path', { d: 'M0,0 L10,5 L0,10 z', class: 'dag-arrow-head' }))));
	const edgeLayer = svg('g', { class: 'dag-edges' });
	for (const [from, to] of g.edges) {
		edgeLayer.appendChild(svg('path', {
			d: edgePath(g.nodes.get(from), g.nodes.get(to)), class: 'dag-edge',
			'marker-end': 'url(#dag-arrow)', 'data-testid': `graph-edge-${from}-${to}`,
		}, svg('title', {}, `${from} → ${to}`)));
	}
	root.appendChild(edgeLayer);
	for (const [id, n] of g.nodes) {
		const t = byId.get(id);
		const st = states ? states.get(id) : null;
		const fill = stateColour(st ? st.state : null);
		const label = id.length > 20 ? id.slice(0, 19) + '…' : id;
		const title = `${id}: ${stateName(st ? st.state : null)}` +
			(t.is_mapped ? ` (foreach, ${st && st.count ? st.count : 0} instances)` : '') +
			(t.trigger_rule && t.trigger_rule !== 'all_success' ? `, ${t.trigger_rule}` : '') +
			flowWords(t);
		const node = svg('g', {
			class: 'dag-node', transform: `translate(${n.x},${n.y})`, tabindex: 0,
			role: 'button', 'aria-label': title, 'data-testid': `graph-node-${id}`,
			'data-state': stateName(st ? st.state : null),
		},
		svg('title', {}, title),
		svg('rect', { width: NODE_W, height: NODE_H, rx: 5, fill, class: 'dag-node-box' }),
		svg('text', { x: 10, y: NODE_H / 2 + 4, fill: textColour(fill) }, label));
		if (t.is_mapped) {
			const count = st && st.count ? String(st.count) : '×';
			node.appendChild(svg('g', { class: 'dag-node-badge',
				transform: `translate(${NODE_W - 30},${-8})` },
			svg('rect', { width: 36, height: 18, rx: 9 }),
			svg('text', { x: 18, y: 13, 'text-anchor': 'middle' }, `[${count}]`)));
		}
		const mark = flowMark(t);
		if (mark) node.appendChild(mark);
		if (onSelect) {
			node.addEventListener('click', () => onSelect(id));
			node.addEventListener('keydown', (e) => {
				if (e.key === 'Enter' || e.key === ' ') {
					e.preventDefault();
					onSelect(id);
				}
			});
		}
		root.appendChild(node);
	}
	return h('div', { class: 'dag-graph-wrap' }, root);
}
