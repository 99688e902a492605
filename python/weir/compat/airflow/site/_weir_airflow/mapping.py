"""Dynamic task mapping (airflow.models.mappedoperator) on weir's `foreach`
(docs/internals/airflow.md, "Mapping").

In the spec (apply()): a mapped task runs in Python (run_task) and fans out with `foreach`:
- over literals only: `foreach: [0, 1, ..., N-1]`, N the number of instances (the cross
  product of the expanded lists, or the length of expand_kwargs' list), computed when the
  file is imported;
- over XComArgs of upstream tasks S1, S2, ...: `foreach: "{{ outputs.S.weir_expand_<task> }}"`
  (one), or `{product: [...]}` of one such list per task (several); each S's try pushes a
  list whose length is its factor of the count when it ends (push_expansions(), in
  run_task): the product of the lengths of the arguments that read S (the first S times
  the literal lists' too); a mapped S's instance pushes its share (one if it has the XCom,
  none if not: the core joins a mapped task's instances' lists), so the core expands the
  task once every S has succeeded, in the step the last one ends.
The items are indexes only: each instance builds its own arguments when it runs (unmap():
the literals from the file, the XComs from the run's outputs), as Airflow's MappedOperator
unmaps at run time, so any Python value (not JSON alone) may be expanded.  An empty
expansion is an empty list: the core skips the task, as Airflow does.
"""

from __future__ import annotations

import itertools
import re
import zlib
from typing import Any, Callable, Dict, List, Optional, Tuple

from _weir_airflow.spec import SpecError

# The output key that holds a rendered map_index_template (the API's rendered_map_index).
RENDERED_KEY = "weir_rendered_map_index"


def expand_key(task_id: str) -> str:
    """The key of an upstream's output that lists the instances of mapped task `task_id`
    (a name of weir's templates: letters, digits, '_'; a checksum where the id had others)."""
    clean = re.sub(r"[^A-Za-z0-9_]", "_", task_id)
    if clean != task_id:
        clean += "_%08x" % (zlib.crc32(task_id.encode()) & 0xFFFFFFFF)
    return "weir_expand_" + clean


def is_mapped(task: Any) -> bool:
    """Whether `task` is a mapped task (a MappedOperator)."""
    return hasattr(task, "expand_input") and hasattr(task, "weir_operator_class")


def _sequence(value: Any, what: str) -> List[Any]:
    """An expanded value as the list of its items (a dict's (key, value) pairs)."""
    if isinstance(value, dict):
        return list(value.items())
    if isinstance(value, (list, tuple)):
        return list(value)
    raise TypeError("%s: expected a list or a dict to map over, got %s"
                    % (what, type(value).__name__))


def resolve_xcom(arg: Any, pull: Callable[[str, str], Any], lazy: bool = False) -> Any:
    """An XComArg's value: a plain one pulled (`pull(task_id, key)`), a map's items through
    its functions (not applied when `lazy`: counting only), a zip's tuples."""
    from airflow.models.mappedoperator import _NOTSET, MapXComArg, ZipXComArg

    if isinstance(arg, MapXComArg):
        items = _sequence(resolve_xcom(arg.source, pull, lazy), repr(arg.source))
        if lazy:
            return items
        out = []
        for item in items:
            for fn in arg.fns:
                item = fn(item)
            out.append(item)
        return out
    if isinstance(arg, ZipXComArg):
        lists = [_sequence(resolve_xcom(a, pull, lazy), repr(a)) for a in arg.args]
        if arg.fillvalue is _NOTSET:
            return list(zip(*lists))
        return list(itertools.zip_longest(*lists, fillvalue=arg.fillvalue))
    got = pull(arg.operator.task_id, arg.key)
    if is_mapped(arg.operator) and isinstance(got, list):
        # a mapped task's XCom: the values its instances pushed (one that returned None
        # pushed none, as in Airflow)
        return [v for v in got if v is not None]
    return got


def instances(task: Any, value_of: Callable[[Any], Any],
              lazy: bool = False) -> List[Dict[str, Any]]:
    """The mapped task's instances' arguments, in map-index order: the cross product of the
    expanded lists (the last argument varying fastest), or expand_kwargs' dicts;
    `value_of(xcom_arg)` gives an XComArg's value (`lazy`: a map's functions not applied,
    for the count alone: expand_kwargs' items are not checked)."""
    from airflow.models.baseoperator import XComArg

    kind, value = task.expand_input
    where = "task %s" % task.task_id
    if kind == "list":
        seq = _sequence(value_of(value) if isinstance(value, XComArg) else value,
                        where + ": expand_kwargs")
        if lazy:
            return [{} for _ in seq]
        for item in seq:
            if not isinstance(item, dict):
                raise TypeError("%s: expand_kwargs: expected dicts of arguments, got %r"
                                % (where, item))
        return [dict(item) for item in seq]
    names = list(value)
    lists = [_sequence(value_of(v) if isinstance(v, XComArg) else v,
                       "%s: expand(%s=...)" % (where, n)) for n, v in value.items()]
    return [dict(zip(names, combo)) for combo in itertools.product(*lists)]


def sources(task: Any) -> List[str]:
    """The ids of the tasks whose XComs the task's expansion reads."""
    from airflow.models.mappedoperator import sources_of

    return sorted({a.operator.task_id for a in sources_of(task.expand_input[1])})


def _no_xcom(arg: Any) -> Any:
    raise AssertionError("no XComArg in a literal expansion")


def _plan(task: Any) -> Tuple[int, Dict[str, List[str]]]:
    """How the count of `task`'s instances factors: the product of its literal lists'
    lengths, and for each upstream task S the names of the arguments that read S (the
    count is the literal product times, for each S, the product of those arguments'
    lengths).  TypeError (a message) for an expansion that does not factor so."""
    from airflow.models.baseoperator import XComArg

    kind, value = task.expand_input
    items = [("expand_kwargs", value)] if kind == "list" else list(value.items())
    literal = 1
    by_source: Dict[str, List[str]] = {}
    for name, v in items:
        if not isinstance(v, XComArg):
            literal *= len(_sequence(v, "task %s: expand(%s=...)" % (task.task_id, name)))
            continue
        from airflow.models.mappedoperator import sources_of

        ids = sorted({a.operator.task_id for a in sources_of(v)})
        if len(ids) > 1:
            raise TypeError("task %s: %s reads the XComs of %s at once (a zip across "
                            "tasks): weir maps over each task's XComs as one argument"
                            % (task.task_id, name, " and ".join(ids)))
        by_source.setdefault(ids[0], []).append(name)
    return literal, by_source


def _check_mapped_source(task: Any, src: Any, names: List[str]) -> None:
    """A mapped upstream is read as one argument, plainly or through .map() (its count is
    the number of its instances with the XCom)."""
    from airflow.models.mappedoperator import MapXComArg, ZipXComArg

    kind, value = task.expand_input
    args = [value] if kind == "list" else [value[n] for n in names]
    if len(args) > 1 or isinstance(args[0], ZipXComArg) or (
            isinstance(args[0], MapXComArg) and isinstance(args[0].source, ZipXComArg)):
        raise TypeError("task %s: expands over mapped task %s's XComs in %s: weir maps "
                        "over a mapped task's XComs as one argument, plainly or through "
                        ".map()" % (task.task_id, src.task_id, ", ".join(names)))


def apply(dag: Any, tasks: List[Dict[str, Any]]) -> None:
    """The mapped tasks' `foreach` in the DAG's document (module docstring); SpecError for
    an expansion weir cannot make."""
    from _weir_airflow.group_mapping import mapped_group

    by_id = {t["task_id"]: t for t in tasks}
    for task in dag.tasks:
        if not is_mapped(task):
            group = mapped_group(getattr(task, "task_group", None))
            if group is not None:
                raise SpecError("task %s: in mapped task group %s: weir maps the group's "
                                "@task tasks (make it a @task)"
                                % (task.task_id, group.group_id), task.lineno)
            continue
        t = by_id[task.task_id]
        line = task.lineno
        if getattr(task.weir_operator_class, "weir_flow", None) is not None:
            raise SpecError("task %s: a mapped branch or short circuit: weir's foreach "
                            "tasks cannot branch" % task.task_id, line)
        try:
            if not sources(task):
                t["foreach"] = list(range(len(instances(task, _no_xcom))))
                continue
            _, by_source = _plan(task)
            for sid, names in by_source.items():
                if is_mapped(dag.task_dict[sid]):
                    _check_mapped_source(task, dag.task_dict[sid], names)
        except TypeError as exc:
            raise SpecError(str(exc), line) from None
        srcs = sorted(by_source)
        for sid in srcs:
            if "_weir_airflow.run_task" not in str(by_id[sid].get("command", "")):
                raise SpecError("task %s: expands over the XCom of %s, which does not run "
                                "in Python: weir maps over a Python task's XComs"
                                % (task.task_id, sid), line)
        refs = ["{{ outputs.%s.%s }}" % (sid, expand_key(task.task_id)) for sid in srcs]
        t["foreach"] = refs[0] if len(refs) == 1 else {"product": refs}


def pushed_by(dag: Any) -> List[str]:
    """The tasks whose XComs a mapped task expands over (they run in Python and push)."""
    return [s for task in dag.tasks if is_mapped(task) for s in sources(task)]


def push_expansions(dag: Any, task: Any, ti: Any, result: Any) -> None:
    """At the end of a try of `task`: for each mapped task that expands over its XComs,
    this task's factor of that task's count (module docstring) as a list of that length,
    pushed under expand_key(); the values it reads are this try's result and pushes."""
    consumers = [c for c in dag.tasks if is_mapped(c) and task.task_id in sources(c)]
    if not consumers:
        return
    own: Dict[str, Any] = dict(ti.pushed)
    if result is not None:
        own["return_value"] = result
        if getattr(task, "multiple_outputs", False) and isinstance(result, dict):
            own.update({str(k): v for k, v in result.items()})

    for consumer in consumers:
        def pull(task_id: str, key: str) -> Any:
            if key not in own:
                raise TypeError("task %s has no XCom %r for mapped task %s to expand over"
                                % (task_id, key, consumer.task_id))
            return own[key]

        literal, by_source = _plan(consumer)
        names = by_source[task.task_id]
        if is_mapped(dag.task_dict[task.task_id]):  # `task` is this instance's operator
            from airflow.models.mappedoperator import sources_of

            kind, value = consumer.expand_input
            arg = value if kind == "list" else value[names[0]]
            key = sources_of(arg)[0].key
            n = 1 if own.get(key) is not None else 0
        else:
            kind, value = consumer.expand_input
            n = 1
            for name in names:
                v = value if kind == "list" else value[name]
                n *= len(_sequence(resolve_xcom(v, pull, lazy=True),
                                   "task %s: expand(%s=...)" % (consumer.task_id, name)))
        if task.task_id == min(by_source):
            n *= literal  # the first upstream carries the literal lists' factor
        ti.xcom_push(expand_key(consumer.task_id), list(range(n)))


def unmap(task: Any, ti: Any) -> Any:
    """The operator of this instance of a mapped task (ti.map_index): the operator's class
    built with the partial()'s arguments and this instance's; the task itself when it is
    not mapped."""
    if not is_mapped(task):
        return task

    def pull(task_id: str, key: str) -> Any:
        got = ti.xcom_pull(task_ids=task_id, key=key, default=_MISSING)
        if got is _MISSING:
            raise KeyError("task %s has no XCom %r for mapped task %s"
                           % (task_id, key, task.task_id))
        return got

    items = instances(task, lambda a: resolve_xcom(a, pull))
    if not 0 <= ti.map_index < len(items):
        raise RuntimeError("task %s: map index %d, but the expansion has %d items now"
                           % (task.task_id, ti.map_index, len(items)))
    mine = items[ti.map_index]
    kw = dict(task.partial_kwargs)
    for key in ("dag", "task_group", "map_index_template"):
        kw.pop(key, None)
    if getattr(task, "weir_group", None) is not None:
        from _weir_airflow.group_mapping import pin  # a task of a mapped task group

        kw["op_args"] = pin(kw.get("op_args") or [], mine, task, ti)
        kw["op_kwargs"] = pin(kw.get("op_kwargs") or {}, mine, task, ti)
    elif task.decorated is not None:
        kw["op_kwargs"] = {**kw.get("op_kwargs", {}), **mine}
    else:
        kw.update(mine)
    kw["task_id"] = task.task_id
    kw["default_args"] = {**task.weir_default_args, **(kw.get("default_args") or {})}
    dag = task.dag
    # built outside the DAG (its id is the mapped task's), then placed in it
    dag.task_dict.pop(task.task_id, None)
    try:
        op = task.weir_operator_class(**kw)
    finally:
        dag.task_dict[task.task_id] = task
    op.dag = dag
    op.upstream_task_ids = set(task.upstream_task_ids)
    op.downstream_task_ids = set(task.downstream_task_ids)
    op.lineno = task.lineno
    op.map_index_template = task.map_index_template
    op.weir_expanded_count = len(items)
    return op


_MISSING: Any = object()


def after_try(dag: Any, task: Any, ti: Any, result: Any, context: Dict[str, Any]) -> None:
    """run_task's hook after a try's execute(): the expansions it decides, the instance's
    rendered map_index_template."""
    push_expansions(dag, task, ti, result)
    rendered = rendered_map_index(task, context)
    if rendered is not None:
        ti.xcom_push(RENDERED_KEY, rendered)


def rendered_map_index(task: Any, context: Dict[str, Any]) -> Optional[str]:
    """The task's map_index_template rendered with the context after the try (the context
    as the callable left it: `get_current_context()["x"] = ...` counts), as Airflow."""
    template = getattr(task, "map_index_template", None)
    if not template:
        return None
    from _weir_airflow.templating import get_template_env

    return str(get_template_env(task.dag).from_string(template).render(**context))
