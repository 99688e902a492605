"""airflow.decorators.sensor: `@task.sensor`, a function poked as a PythonSensor: it returns
a bool or a PokeReturnValue (whose xcom_value becomes the task's return value)."""

from __future__ import annotations

from typing import Any, Callable, Optional

from airflow.decorators import _TaskDecorator
from airflow.models.baseoperator import XComArg
from airflow.models.dag import current_dag
from airflow.sensors.python import PythonSensor


class DecoratedSensorOperator(PythonSensor):
    """The task `@task.sensor` makes."""


class _SensorDecorator(_TaskDecorator):
    """The factory `@task.sensor` makes; calling it adds a sensor to the current DAG."""

    def __call__(self, *args: Any, **kwargs: Any) -> XComArg:
        opts = dict(self.task_kwargs)
        dag_obj = opts.get("dag") or current_dag()
        opts["task_id"] = self._task_id(dag_obj)
        op = DecoratedSensorOperator(python_callable=self.function, op_args=args,
                                     op_kwargs=kwargs, **opts)
        return XComArg(op)

    def override(self, **kwargs: Any) -> "_SensorDecorator":
        """The same sensor with other arguments."""
        return _SensorDecorator(self.function, {**self.task_kwargs, **kwargs})


def sensor_task(python_callable: Optional[Callable[..., Any]] = None, **kwargs: Any) -> Any:
    """`@task.sensor` or `@task.sensor(poke_interval=..., mode=..., ...)`."""
    if python_callable is not None:
        return _SensorDecorator(python_callable, kwargs)
    return lambda fn: _SensorDecorator(fn, kwargs)


__all__ = ["sensor_task", "DecoratedSensorOperator"]
