"""Dynamic task mapping (airflow.models.mappedoperator) on weir's `foreach`
(docs/internals/airflow.md, "Mapping").

In the spec (apply()): a mapped task runs in Python (run_task) and fans out with `foreach`:
- over literals only: `foreach: [0, 1, ..., N-1]`, N the number of instances (the cross
  product of the expanded lists, or the length of expand_kwargs' list), computed when the
  file is imported;
- over XComArgs of one upstream task S: `foreach: "{{ outputs.S.weir_expand_<task> }}"`;
  S's try computes that list of indexes from its own result when it ends
  (push_expansions(), in run_task), so the core expands the task in the step S ends.
The items are indexes only: each instance builds its own arguments when it runs (unmap():
the literals from the file, the XComs from the run's outputs), as Airflow's MappedOperator
unmaps at run time, so any Python value (not JSON alone) may be expanded.  An empty
expansion is an empty list: the core skips the task, as Airflow does.
"""

from __future__ import annotations

import itertools
import re
import zlib
from typing import Any, Callable, Dict, List, Optional

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
    return pull(arg.operator.task_id, arg.key)


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


def apply(dag: Any, tasks: List[Dict[str, Any]]) -> None:
    """The mapped tasks' `foreach` in the DAG's document (module docstring); SpecError for
    an expansion weir cannot make."""
    by_id = {t["task_id"]: t for t in tasks}
    for task in dag.tasks:
        if not is_mapped(task):
            continue
        t = by_id[task.task_id]
        line = task.lineno
        if getattr(task.weir_operator_class, "weir_flow", None) is not None:
            raise SpecError("task %s: a mapped branch or short circuit: weir's foreach "
                            "tasks cannot branch" % task.task_id, line)
        srcs = sources(task)
        if not srcs:
            try:
                t["foreach"] = list(range(len(instances(task, _no_xcom))))
            except TypeError as exc:
                raise SpecError(str(exc), line) from None
            continue
        if len(srcs) > 1:
            raise SpecError("task %s: expands over the XComs of %s: weir maps over one "
                            "upstream task's XComs for now (return them from one task)"
                            % (task.task_id, " and ".join(srcs)), line)
        src = dag.task_dict[srcs[0]]
        if is_mapped(src):
            raise SpecError("task %s: expands over mapped task %s's XComs: not yet (weir "
                            "maps over a task that runs once)" % (task.task_id, srcs[0]), line)
        if "_weir_airflow.run_task" not in str(by_id[srcs[0]].get("command", "")):
            raise SpecError("task %s: expands over the XCom of %s, which does not run in "
                            "Python: weir maps over a Python task's XComs"
                            % (task.task_id, srcs[0]), line)
        t["foreach"] = "{{ outputs.%s.%s }}" % (srcs[0], expand_key(task.task_id))


def pushed_by(dag: Any) -> List[str]:
    """The tasks whose XComs a mapped task expands over (they run in Python and push)."""
    return [s for task in dag.tasks if is_mapped(task) for s in sources(task)]


def push_expansions(dag: Any, task: Any, ti: Any, result: Any) -> None:
    """At the end of a try of `task`: for each mapped task that expands over its XComs,
    the list of that task's map indexes (its `foreach`), pushed under expand_key(); the
    values the expansion reads are this try's result and pushes."""
    consumers = [c for c in dag.tasks if is_mapped(c) and task.task_id in sources(c)]
    if not consumers:
        return
    own: Dict[str, Any] = dict(ti.pushed)
    if result is not None:
        own["return_value"] = result
        if getattr(task, "multiple_outputs", False) and isinstance(result, dict):
            own.update({str(k): v for k, v in result.items()})

    def pull(task_id: str, key: str) -> Any:
        if key not in own:
            raise TypeError("task %s has no XCom %r for mapped task %s to expand over"
                            % (task_id, key, consumer.task_id))
        return own[key]

    for consumer in consumers:
        n = len(instances(consumer, lambda a: resolve_xcom(a, pull, lazy=True), lazy=True))
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
    if task.decorated is not None:
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
