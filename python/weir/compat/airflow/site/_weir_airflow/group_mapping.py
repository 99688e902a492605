"""Mapped task groups: `@task_group`'s `.partial(...).expand(...)` and `.expand_kwargs(...)`
(docs/internals/airflow.md, "Mapping").

Each @task task made inside the group is a mapped task (a MappedOperator, `weir_group`
set) whose expansion is the group's: the same instances, the same `foreach`, so instance i
of every task of the group is the group's instance i.  Its own arguments stay as written:
when an instance runs, pin() puts the group's values of instance i where the function got a
MappedArgument, and the value of instance i where it got the XCom of another task of the
group, as Airflow's mapped task group does.  A task downstream of the group that takes a
task's XCom gets every instance's value.
"""

from __future__ import annotations

from typing import Any, Dict, Optional


def mapped_group(group: Any) -> Optional[Any]:
    """The innermost mapped group `group` is in (itself or a parent), or None."""
    while group is not None:
        if getattr(group, "weir_expand_input", None) is not None:
            return group
        group = group.parent_group
    return None


def make_task(decorator: Any, group: Any, opts: Dict[str, Any], args: Any,
              kwargs: Dict[str, Any]) -> Any:
    """A @task called inside mapped group `group`: its mapped task (module docstring)."""
    from airflow.models.mappedoperator import MappedOperator, OperatorPartial

    partial = OperatorPartial(decorator.operator,
                              {**opts, "python_callable": decorator.function,
                               "op_args": list(args), "op_kwargs": dict(kwargs)},
                              decorated=decorator)
    kind, value = group.weir_expand_input
    op = MappedOperator(partial, kind, value)
    setattr(op, "weir_group", group)  # pin() and unmap() read it
    return op


def expand(factory: Any, kind: str, value: Any, fixed: Dict[str, Any]) -> Any:
    """`factory.partial(**fixed).expand(**value)` ("dict") or `.expand_kwargs(value)`
    ("list"): the group made with MappedArguments for the expanded names; what the function
    returned (its last task's XCom, for the dependencies) or the group."""
    from airflow.models.baseoperator import XComArg
    from airflow.models.expandinput import MappedArgument
    from airflow.utils.task_group import TaskGroup

    if kind == "dict":
        if not value:
            raise TypeError("expand() of task group %s: no argument to map over"
                            % factory.function.__name__)
        for name, v in value.items():
            if name in fixed:
                raise TypeError("expand(): %s is given to partial() too" % name)
            if not isinstance(v, (XComArg, list, tuple, dict)):
                raise ValueError("expand(%s=%r): expected a list, a dict or an XComArg"
                                 % (name, v))
    opts = dict(factory.group_kwargs)
    group_id = str(opts.pop("group_id", None) or factory.function.__name__)
    opts.setdefault("add_suffix_on_collision", True)
    with TaskGroup(group_id, **opts) as group:
        if mapped_group(group.parent_group) is not None:
            raise TypeError("task group %s: a mapped task group inside a mapped task group: "
                            "weir maps one level" % group.group_id)
        setattr(group, "weir_expand_input", (kind, value))  # mapped_group() reads it
        if kind == "dict":
            args = {**fixed, **{n: MappedArgument(group, n) for n in value}}
            ret = factory.function(**args)
        else:
            # expand_kwargs: each dict's keys are the function's arguments
            import inspect

            names = [p for p in inspect.signature(factory.function).parameters
                     if p not in fixed]
            ret = factory.function(**fixed, **{n: MappedArgument(group, n) for n in names})
    return ret if ret is not None else group


def pin(value: Any, mine: Dict[str, Any], task: Any, ti: Any) -> Any:
    """An instance's argument: each MappedArgument its group's value for this instance
    (`mine`), each XCom of a task of the same mapped group that task's instance's value."""
    from airflow.models.baseoperator import XComArg
    from airflow.models.expandinput import MappedArgument

    if isinstance(value, MappedArgument):
        if value.name not in mine:
            raise KeyError("task %s: the group's instance %d has no argument %r"
                           % (task.task_id, ti.map_index, value.name))
        return mine[value.name]
    if isinstance(value, XComArg) and getattr(value.operator, "weir_group", None) is \
            getattr(task, "weir_group", False):
        missing = object()
        got = ti.xcom_pull(task_ids=value.operator.task_id, key=value.key,
                           map_indexes=ti.map_index, default=missing)
        if got is missing:
            raise KeyError("task %s has no XCom %r at map index %d for task %s"
                           % (value.operator.task_id, value.key, ti.map_index, task.task_id))
        return got
    if isinstance(value, dict):
        return {k: pin(v, mine, task, ti) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return type(value)(pin(v, mine, task, ti) for v in value)
    return value
