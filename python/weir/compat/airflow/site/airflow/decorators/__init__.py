"""airflow.decorators: the TaskFlow API, `@dag` and `@task`.

`@task` turns a function into a task factory: called inside a DAG, it makes a
PythonOperator-like task whose arguments may be other tasks' return values (XComArgs: each
makes a dependency), and returns its own return value as an XComArg.
"""

from __future__ import annotations

import functools
from typing import Any, Callable, Dict, Optional

from airflow.models.baseoperator import XComArg
from airflow.models.dag import current_dag, dag
from airflow.operators.python import (BranchPythonOperator, PythonOperator,
                                       ShortCircuitOperator)


class _TaskDecorator:
    """The factory `@task` makes; calling it adds a task to the current DAG (a
    PythonOperator, or the operator class `@task.branch` / `@task.short_circuit` give)."""

    def __init__(self, fn: Callable[..., Any], task_kwargs: Dict[str, Any],
                 operator: Any = PythonOperator) -> None:
        self.function = fn
        self.task_kwargs = task_kwargs
        self.operator = operator
        functools.update_wrapper(self, fn)

    def _task_id(self, dag_obj: Any) -> str:
        """The task's id in its group (the group prefixes it), with Airflow's suffix
        `__N` when the factory is called again."""
        from airflow.utils.task_group import current_group

        base = str(self.task_kwargs.get("task_id") or self.function.__name__)
        group = self.task_kwargs.get("task_group") or current_group()

        def full(i: str) -> str:
            return group.child_id(i) if group is not None else i

        if dag_obj is None or full(base) not in dag_obj.task_dict:
            return base
        n = 1
        while full("%s__%d" % (base, n)) in dag_obj.task_dict:
            n += 1
        return "%s__%d" % (base, n)

    def _options(self) -> Dict[str, Any]:
        """The operator's arguments: the decorator's, with the task id and multiple_outputs
        as Airflow gives them."""
        opts = dict(self.task_kwargs)
        if "multiple_outputs" not in opts:
            opts["multiple_outputs"] = _returns_dict(self.function)
        from airflow.utils.task_group import current_group

        group = opts.get("task_group") or current_group()
        dag_obj = opts.get("dag") or (group.dag if group is not None else None) or current_dag()
        opts["task_id"] = self._task_id(dag_obj)
        return opts

    def partial(self, *args: Any, **kwargs: Any) -> Any:
        """The fixed arguments of a mapped task (airflow.models.mappedoperator)."""
        from airflow.models.mappedoperator import OperatorPartial

        opts = self._options()
        for key in ("weir_role", "on_failure_fail_dagrun"):
            opts.pop(key, None)
        return OperatorPartial(self.operator, {**opts, "python_callable": self.function,
                                               "op_args": list(args), "op_kwargs": kwargs},
                               decorated=self)

    def expand(self, **mapped: Any) -> Any:
        """One task instance per item (no fixed arguments)."""
        return self.partial().expand(**mapped)

    def expand_kwargs(self, kwargs: Any) -> Any:
        """One task instance per dict of arguments."""
        return self.partial().expand_kwargs(kwargs)

    def __call__(self, *args: Any, **kwargs: Any) -> XComArg:
        opts = self._options()
        role = opts.pop("weir_role", None)  # @setup, @teardown
        fail_run = opts.pop("on_failure_fail_dagrun", None)
        from _weir_airflow.group_mapping import make_task, mapped_group
        from airflow.utils.task_group import current_group

        group = mapped_group(opts.get("task_group") or current_group())
        if group is not None:  # a task of a mapped task group: mapped as the group is
            return XComArg(make_task(self, group, opts, args, kwargs))
        op = self.operator(python_callable=self.function, op_args=args, op_kwargs=kwargs,
                           **opts)
        if role == "setup":
            op.as_setup()
        elif role == "teardown":
            op.as_teardown(on_failure_fail_dagrun=fail_run)
        return XComArg(op)

    def override(self, **kwargs: Any) -> "_TaskDecorator":
        """The same task with other arguments (`task_id`, `retries`, ...)."""
        return _TaskDecorator(self.function, {**self.task_kwargs, **kwargs}, self.operator)


def _returns_dict(fn: Callable[..., Any]) -> bool:
    """Whether the function's return annotation is a dict (Airflow infers
    multiple_outputs from it)."""
    import typing

    try:
        ret = typing.get_type_hints(fn).get("return")
    except Exception:  # an annotation that does not resolve: no inference
        return False
    return ret is dict or typing.get_origin(ret) is dict


def _task(python_callable: Optional[Callable[..., Any]] = None, operator: Any = PythonOperator,
          **kwargs: Any) -> Any:
    """`@task` or `@task(retries=2, ...)` (and the kinds below, by their operator)."""
    if python_callable is not None:
        return _TaskDecorator(python_callable, kwargs, operator)
    return lambda fn: _TaskDecorator(fn, kwargs, operator)


class _TaskNamespace:
    """`task` is called as `@task`, `@task(...)` and `@task.python(...)`."""

    def __call__(self, python_callable: Optional[Callable[..., Any]] = None,
                 **kwargs: Any) -> Any:
        return _task(python_callable, **kwargs)

    def python(self, python_callable: Optional[Callable[..., Any]] = None,
               **kwargs: Any) -> Any:
        """Same as `@task`."""
        return _task(python_callable, **kwargs)

    def branch(self, python_callable: Optional[Callable[..., Any]] = None,
               **kwargs: Any) -> Any:
        """`@task.branch`: a BranchPythonOperator."""
        return _task(python_callable, BranchPythonOperator, **kwargs)

    def short_circuit(self, python_callable: Optional[Callable[..., Any]] = None,
                      **kwargs: Any) -> Any:
        """`@task.short_circuit`: a ShortCircuitOperator."""
        return _task(python_callable, ShortCircuitOperator, **kwargs)

    def bash(self, python_callable: Optional[Callable[..., Any]] = None,
             **kwargs: Any) -> Any:
        """`@task.bash` (Airflow 2.9): the function returns the command, run as a
        BashOperator's (airflow.decorators.bash)."""
        from airflow.decorators.bash import BashDecoratedOperator
        return _task(python_callable, BashDecoratedOperator, **kwargs)

    def external_python(self, python_callable: Optional[Callable[..., Any]] = None,
                        **kwargs: Any) -> Any:
        """`@task.external_python(python=...)`: an ExternalPythonOperator."""
        from airflow.operators.python import ExternalPythonOperator
        return _task(python_callable, ExternalPythonOperator, **kwargs)

    def virtualenv(self, python_callable: Optional[Callable[..., Any]] = None,
                   **kwargs: Any) -> Any:
        """`@task.virtualenv`: a PythonVirtualenvOperator (a cached virtual environment)."""
        from airflow.operators.python import PythonVirtualenvOperator
        return _task(python_callable, PythonVirtualenvOperator, **kwargs)

    def docker(self, python_callable: Optional[Callable[..., Any]] = None,
               **kwargs: Any) -> Any:
        """`@task.docker`: refused (weir runs no containers: airflow.providers.docker)."""
        from _weir_airflow.refused import no_containers
        raise no_containers("@task.docker")

    def kubernetes(self, python_callable: Optional[Callable[..., Any]] = None,
                   **kwargs: Any) -> Any:
        """`@task.kubernetes`: refused (weir starts no pods)."""
        from _weir_airflow.refused import no_containers
        raise no_containers("@task.kubernetes")

    def sensor(self, python_callable: Optional[Callable[..., Any]] = None,
               **kwargs: Any) -> Any:
        """`@task.sensor`: the function is a PythonSensor's poke (airflow.decorators.sensor)."""
        from airflow.decorators.sensor import sensor_task
        return sensor_task(python_callable, **kwargs)


task = _TaskNamespace()


def setup(python_callable: Any = None) -> Any:
    """`@setup` (over a function or a `@task`): a task marked as a setup."""
    fn = python_callable.function if isinstance(python_callable, _TaskDecorator) else \
        python_callable
    kwargs = dict(python_callable.task_kwargs) \
        if isinstance(python_callable, _TaskDecorator) else {}
    return _TaskDecorator(fn, {**kwargs, "weir_role": "setup"})


def teardown(python_callable: Any = None, *, on_failure_fail_dagrun: bool = False) -> Any:
    """`@teardown` or `@teardown(on_failure_fail_dagrun=True)`: a task marked as a teardown."""
    def wrap(f: Any) -> _TaskDecorator:
        fn = f.function if isinstance(f, _TaskDecorator) else f
        kwargs = dict(f.task_kwargs) if isinstance(f, _TaskDecorator) else {}
        return _TaskDecorator(fn, {**kwargs, "weir_role": "teardown",
                                   "on_failure_fail_dagrun": on_failure_fail_dagrun})

    return wrap(python_callable) if python_callable is not None else wrap


class _TaskGroupFactory:
    """What `@task_group` makes: calling it opens a TaskGroup named after the function (a
    second call gets `name__1`), runs the function inside it, and returns what the function
    returned (a task or XComArg, for the dependencies) or else the group."""

    def __init__(self, fn: Callable[..., Any], group_kwargs: Dict[str, Any]) -> None:
        self.function = fn
        self.group_kwargs = group_kwargs
        functools.update_wrapper(self, fn)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        from airflow.utils.task_group import TaskGroup

        opts = dict(self.group_kwargs)
        group_id = str(opts.pop("group_id", None) or self.function.__name__)
        opts.setdefault("add_suffix_on_collision", True)
        with TaskGroup(group_id, **opts) as group:
            ret = self.function(*args, **kwargs)
        return ret if ret is not None else group

    def partial(self, **kwargs: Any) -> "_GroupPartial":
        """The fixed arguments of a mapped task group."""
        return _GroupPartial(self, kwargs)

    def expand(self, **mapped: Any) -> Any:
        """One instance of each of the group's tasks per item (their cross product)."""
        return _GroupPartial(self, {}).expand(**mapped)

    def expand_kwargs(self, kwargs: Any) -> Any:
        """One instance of each of the group's tasks per dict of arguments."""
        return _GroupPartial(self, {}).expand_kwargs(kwargs)

    def override(self, **kwargs: Any) -> "_TaskGroupFactory":
        """The same group with other arguments (`group_id`, ...)."""
        return _TaskGroupFactory(self.function, {**self.group_kwargs, **kwargs})


class _GroupPartial:
    """`@task_group`'s `.partial(**fixed)`: `.expand()` or `.expand_kwargs()` map it."""

    def __init__(self, factory: _TaskGroupFactory, fixed: Dict[str, Any]) -> None:
        self.factory = factory
        self.fixed = fixed

    def expand(self, **mapped: Any) -> Any:
        from _weir_airflow.group_mapping import expand

        return expand(self.factory, "dict", mapped, self.fixed)

    def expand_kwargs(self, kwargs: Any) -> Any:
        from _weir_airflow.group_mapping import expand

        return expand(self.factory, "list", kwargs, self.fixed)


def task_group(python_callable: Optional[Callable[..., Any]] = None, **kwargs: Any) -> Any:
    """`@task_group` or `@task_group(group_id=..., default_args=..., ...)`."""
    if python_callable is not None:
        return _TaskGroupFactory(python_callable, kwargs)
    return lambda fn: _TaskGroupFactory(fn, kwargs)


__all__ = ["dag", "setup", "task", "task_group", "teardown"]
