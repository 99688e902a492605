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
from airflow.operators.python import PythonOperator


class _TaskDecorator:
    """The factory `@task` makes; calling it adds a task to the current DAG."""

    def __init__(self, fn: Callable[..., Any], task_kwargs: Dict[str, Any]) -> None:
        self.function = fn
        self.task_kwargs = task_kwargs
        functools.update_wrapper(self, fn)

    def _task_id(self, dag_obj: Any) -> str:
        base = str(self.task_kwargs.get("task_id") or self.function.__name__)
        if dag_obj is None or base not in dag_obj.task_dict:
            return base
        n = 1
        while "%s__%d" % (base, n) in dag_obj.task_dict:
            n += 1
        return "%s__%d" % (base, n)  # Airflow's suffix for a factory called twice

    def __call__(self, *args: Any, **kwargs: Any) -> XComArg:
        opts = dict(self.task_kwargs)
        dag_obj = opts.get("dag") or current_dag()
        opts["task_id"] = self._task_id(dag_obj)
        op = PythonOperator(python_callable=self.function, op_args=args, op_kwargs=kwargs,
                            **opts)
        return XComArg(op)

    def override(self, **kwargs: Any) -> "_TaskDecorator":
        """The same task with other arguments (`task_id`, `retries`, ...)."""
        return _TaskDecorator(self.function, {**self.task_kwargs, **kwargs})


def _task(python_callable: Optional[Callable[..., Any]] = None,
          **kwargs: Any) -> Any:
    """`@task` or `@task(retries=2, ...)`."""
    if python_callable is not None:
        return _TaskDecorator(python_callable, kwargs)
    return lambda fn: _TaskDecorator(fn, kwargs)


class _TaskNamespace:
    """`task` is called as `@task`, `@task(...)` and `@task.python(...)`."""

    def __call__(self, python_callable: Optional[Callable[..., Any]] = None,
                 **kwargs: Any) -> Any:
        return _task(python_callable, **kwargs)

    def python(self, python_callable: Optional[Callable[..., Any]] = None,
               **kwargs: Any) -> Any:
        """Same as `@task`."""
        return _task(python_callable, **kwargs)

    def sensor(self, python_callable: Optional[Callable[..., Any]] = None,
               **kwargs: Any) -> Any:
        """`@task.sensor`: the function is a PythonSensor's poke (airflow.decorators.sensor)."""
        from airflow.decorators.sensor import sensor_task
        return sensor_task(python_callable, **kwargs)


task = _TaskNamespace()

__all__ = ["dag", "task"]
