#!/usr/bin/env python3
"""Checks that the includes under src/ follow the layer table.

Usage: tools/check_includes.py [--design FILE] [SRC_DIR]
       (SRC_DIR defaults to src, FILE to docs/internals/design.md)

The layers, lowest first, and what each never includes are read from the
tables of docs/internals/design.md ('Layers', 'What a layer never includes',
'Header groups'):

    lib -> model -> store -> sched -> exec -> data -> launch -> api -> server -> cli

A file in src/<layer>/ (or a folder below it) may include its own layer and the
layers below it.  On top of that order, the design's 'never' lines forbid some
includes a layer's rank would allow.  Finally no two pieces may include each
other, directly or round a longer circle: a piece is a .c and its .h, with the
files it is split into (Tree.piece_of), and the check reports each circle with
the include lines that make it.

Exits 0 when every include follows the rules, 1 when one does not (each broken
rule is one line: file:line: what it includes: the rule), 2 on a usage error.
Python's standard library only, so that `make check` needs nothing new.
"""

import os
import re
import sys

DESIGN = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "docs", "internals", "design.md")
NAME = re.compile(r"`([^`]+)`")


def table_rows(text, heading):
	"""The body rows of the first table after `heading`, as lists of cells."""
	lines = text.splitlines()
	try:
		i = next(n for n, line in enumerate(lines) if line.strip() == heading)
	except StopIteration:
		raise SystemExit("check_includes: %s has no heading %r" % (DESIGN, heading))
	rows = []
	for line in lines[i + 1:]:
		if line.startswith("#"):
			break
		if not line.startswith("|"):
			if rows:
				break
			continue
		cells = [c.strip() for c in line.strip().strip("|").split("|")]
		if set("".join(cells)) <= set("-: "):
			continue  # the row under the header
		rows.append(cells)
	return rows[1:]  # the header row itself


def read_design(path):
	"""(layers in rank order, never-layers, never-system) from the design's
	tables: 'Layers', 'What a layer never includes' and 'Header groups'."""
	with open(path, encoding="utf-8") as f:
		text = f.read()
	layers = [NAME.match(r[0]).group(1) for r in table_rows(text, "## Layers")]
	groups = {NAME.match(r[0]).group(1): NAME.findall(r[1])
	          for r in table_rows(text, "### Header groups")}
	never_layers, never_system = {}, {}
	for layer_cell, what, why in table_rows(text, "### What a layer never includes"):
		layer = NAME.match(layer_cell).group(1)
		names = NAME.findall(what)
		if what.startswith("headers"):
			prefixes = [h for g in names for h in groups[g]]
			never_system[layer] = (prefixes, why, "what it reaches" in what)
		else:
			for name in names:
				never_layers.setdefault(layer, {})[name] = why
	return layers, never_layers, never_system


# The layers, lowest first; the layers below a layer that it still never
# includes, with the reason; the system headers a layer never includes:
# (prefixes, reason, whole_closure).  A prefix ending in '/' names a folder of
# headers.  With whole_closure the rule also holds for every project header
# the layer's files reach, because what it guards is what the layer's files
# link.  All three come from docs/internals/design.md.
LAYERS, NEVER_LAYERS, NEVER_SYSTEM, RANK = [], {}, {}, {}


def load_design(path):
	global LAYERS, NEVER_LAYERS, NEVER_SYSTEM, RANK
	LAYERS, NEVER_LAYERS, NEVER_SYSTEM = read_design(path)
	RANK = {name: i for i, name in enumerate(LAYERS)}

INCLUDE = re.compile(r'^\s*#\s*include\s*([<"])([^>"]+)[>"]')


def read_includes(path):
	"""[(line number, '<' or '"', name)] of one file's #include lines."""
	out = []
	with open(path, encoding="utf-8", errors="replace") as f:
		for n, line in enumerate(f, 1):
			m = INCLUDE.match(line)
			if m:
				out.append((n, m.group(1), m.group(2)))
	return out


def layer_of(rel):
	"""The layer of a path relative to the source root, or None."""
	parts = rel.split("/")
	return parts[0] if len(parts) > 1 and parts[0] in RANK else None


def matches(name, prefixes):
	return any(name.startswith(p) if p.endswith("/") else name == p for p in prefixes)


class Tree:
	def __init__(self, root):
		self.root = root
		self.files = {}  # rel path -> [(line, kind, name)]
		for d, subdirs, names in os.walk(root):
			subdirs.sort()
			for name in sorted(names):
				if name.endswith((".c", ".h")):
					full = os.path.join(d, name)
					rel = os.path.relpath(full, root).replace(os.sep, "/")
					self.files[rel] = read_includes(full)

	def piece_of(self, rel):
		"""The piece a file belongs to: a .c and its .h are one piece, and so
		are the files a piece is split into, named after it in its folder
		(exec/slurm_script.c and model/job_spec_edit.h beside exec/slurm.c
		and model/job_spec.h).  The shortest such name wins."""
		stem = os.path.splitext(rel)[0]
		folder, base = os.path.split(stem)
		parts = base.split("_")
		for i in range(1, len(parts)):
			cand = os.path.join(folder, "_".join(parts[:i])).replace(os.sep, "/")
			if cand + ".c" in self.files or cand + ".h" in self.files:
				return cand
		return stem

	def show(self, rel):
		"""A path as the user passed the root: src/api/api.c."""
		return os.path.join(self.root, rel).replace(os.sep, "/")

	def resolve(self, rel, name):
		"""The file a quoted include names, as the compiler finds it: the
		including file's folder first, then the source root (-Isrc)."""
		here = os.path.dirname(rel)
		for cand in (os.path.normpath(os.path.join(here, name)), os.path.normpath(name)):
			cand = cand.replace(os.sep, "/")
			if cand in self.files:
				return cand
		return None

	def closure(self, rel):
		"""Every project file rel reaches through quoted includes (rel too)."""
		seen, todo = {rel}, [rel]
		while todo:
			cur = todo.pop()
			for _, kind, name in self.files[cur]:
				if kind != '"':
					continue
				dep = self.resolve(cur, name)
				if dep and dep not in seen:
					seen.add(dep)
					todo.append(dep)
		return seen


def check_layers(tree, problems):
	for rel, incs in tree.files.items():
		layer = layer_of(rel)
		if layer is None:
			problems.append("%s: not in a layer folder (%s)" % (tree.show(rel), " ".join(LAYERS)))
			continue
		for line, kind, name in incs:
			close = ">" if kind == "<" else '"'
			where = "%s:%d: includes %s%s%s" % (tree.show(rel), line, kind, name, close)
			if kind == "<":
				rule = NEVER_SYSTEM.get(layer)
				if rule and matches(name, rule[0]):
					problems.append("%s: %s" % (where, rule[1]))
				continue
			dep = tree.resolve(rel, name)
			if dep is None:
				problems.append("%s: names no file under the source root" % where)
				continue
			dep_layer = layer_of(dep)
			if dep_layer is None:
				continue  # reported once, as the file's own problem
			if RANK[dep_layer] > RANK[layer]:
				problems.append("%s: %s is above %s; a layer includes only its own and the layers below (%s)"
				                % (where, dep_layer, layer, " -> ".join(LAYERS)))
			elif dep_layer in NEVER_LAYERS.get(layer, {}):
				problems.append("%s: %s" % (where, NEVER_LAYERS[layer][dep_layer]))


def check_closures(tree, problems):
	"""The whole_closure rules: a header a layer's file reaches must not
	include what the layer never links.  Reported at the offending line,
	once per (line, layer), naming a file of the layer that reaches it."""
	reported = set()
	for rel in sorted(tree.files):
		layer = layer_of(rel)
		rule = NEVER_SYSTEM.get(layer)
		if not rule or not rule[2]:
			continue
		for dep in sorted(tree.closure(rel)):
			if layer_of(dep) == layer:
				continue  # its own lines are checked directly
			for line, kind, name in tree.files[dep]:
				if kind == "<" and matches(name, rule[0]) and (dep, line, layer) not in reported:
					reported.add((dep, line, layer))
					problems.append("%s:%d: includes <%s>, reached from %s: %s"
					                % (tree.show(dep), line, name, tree.show(rel), rule[1]))


def strongly_connected(nodes, edges):
	"""Tarjan's algorithm, iterative: the components of the graph."""
	index, low, on_stack, stack, comps = {}, {}, set(), [], []
	counter = [0]
	for start in nodes:
		if start in index:
			continue
		work = [(start, iter(sorted(edges.get(start, ()))))]
		index[start] = low[start] = counter[0]
		counter[0] += 1
		stack.append(start)
		on_stack.add(start)
		while work:
			node, it = work[-1]
			advanced = False
			for nxt in it:
				if nxt not in index:
					index[nxt] = low[nxt] = counter[0]
					counter[0] += 1
					stack.append(nxt)
					on_stack.add(nxt)
					work.append((nxt, iter(sorted(edges.get(nxt, ())))))
					advanced = True
					break
				if nxt in on_stack:
					low[node] = min(low[node], index[nxt])
			if advanced:
				continue
			work.pop()
			if work:
				low[work[-1][0]] = min(low[work[-1][0]], low[node])
			if low[node] == index[node]:
				comp = []
				while True:
					top = stack.pop()
					on_stack.discard(top)
					comp.append(top)
					if top == node:
						break
				comps.append(sorted(comp))
	return comps


def one_cycle(start, members, edges):
	"""A shortest circle from start back to start inside one component."""
	prev, frontier = {start: None}, [start]
	while frontier:
		nxt_frontier = []
		for node in frontier:
			for nxt in sorted(edges.get(node, ())):
				if nxt == start:
					path = [node]
					while prev[path[-1]] is not None:
						path.append(prev[path[-1]])
					return list(reversed(path)) + [start]
				if nxt in members and nxt not in prev:
					prev[nxt] = node
					nxt_frontier.append(nxt)
		frontier = nxt_frontier
	return [start]


def check_circles(tree, problems):
	edges, lines = {}, {}
	for rel, incs in tree.files.items():
		src = tree.piece_of(rel)
		edges.setdefault(src, set())
		for line, kind, name in incs:
			dep = tree.resolve(rel, name) if kind == '"' else None
			if dep is None or tree.piece_of(dep) == src:
				continue
			dst = tree.piece_of(dep)
			edges[src].add(dst)
			lines.setdefault((src, dst), []).append("%s:%d: #include \"%s\"" % (tree.show(rel), line, name))
	for comp in strongly_connected(sorted(edges), edges):
		if len(comp) < 2:
			continue
		members = set(comp)
		cycle = one_cycle(comp[0], members, edges)
		msg = ["include circle: %s" % " -> ".join(tree.show(m) for m in cycle)]
		if len(members) > len(cycle) - 1:
			msg.append("  pieces in the circle: %s" % ", ".join(tree.show(m) for m in comp))
		msg.append("  the includes inside it (break one to open the circle):")
		for src in comp:
			for dst in sorted(edges[src] & members):
				msg.extend("    " + x for x in lines[(src, dst)])
		problems.append("\n".join(msg))


def main(argv):
	args, design = argv[1:], DESIGN
	if len(args) >= 2 and args[0] == "--design":
		design, args = args[1], args[2:]
	if len(args) > 1 or (args and args[0].startswith("-")):
		sys.stderr.write("usage: %s [--design FILE] [SRC_DIR]\n" % argv[0])
		return 2
	root = args[0] if args else "src"
	if not os.path.isfile(design):
		sys.stderr.write("%s: no such design: %s\n" % (argv[0], design))
		return 2
	load_design(design)
	if not os.path.isdir(root):
		sys.stderr.write("%s: no such folder: %s\n" % (argv[0], root))
		return 2
	tree = Tree(root)
	problems = []
	check_layers(tree, problems)
	check_closures(tree, problems)
	check_circles(tree, problems)
	for p in problems:
		print(p)
	if problems:
		print("check_includes: %d problem(s) in %d files under %s"
		      % (len(problems), len(tree.files), root))
		return 1
	print("check_includes: %d files under %s follow the layer table" % (len(tree.files), root))
	return 0


if __name__ == "__main__":
	sys.exit(main(sys.argv))
