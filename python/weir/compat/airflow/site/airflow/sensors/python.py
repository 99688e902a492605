"""airflow.sensors.python: PythonSensor, a callable poked in the task's process."""

from __future__ import annotations

from typing import Any, Callable, Collection, Dict, Mapping, Optional, Sequence, Union

from airflow.models.baseoperator import xcom_args_in
from airflow.operators.python import determine_kwargs
from airflow.sensors.base import BaseSensorOperator, PokeReturnValue


class PythonSensor(BaseSensorOperator):
    """Waits until `python_callable(*op_args, **op_kwargs)` (with the context's keys it
    names) returns a true value or a PokeReturnValue that is done."""

    template_fields: Sequence[str] = ("templates_dict", "op_args", "op_kwargs")

    def __init__(
        self,
        *,
        python_callable: Callable[..., Any],
        op_args: Optional[Collection[Any]] = None,
        op_kwargs: Optional[Mapping[str, Any]] = None,
        templates_dict: Optional[Dict[str, Any]] = None,
        **kwargs: Any,
    ) -> None:
        super().__init__(**kwargs)
        if not callable(python_callable):
            raise TypeError("python_callable: expected a callable, got %r" % (python_callable,))
        self.python_callable = python_callable
        self.op_args = list(op_args or [])
        self.op_kwargs = dict(op_kwargs or {})
        self.templates_dict = templates_dict
        for arg in xcom_args_in([self.op_args, self.op_kwargs]):
            self.set_upstream(arg.operator)

    def poke(self, context: Dict[str, Any]) -> Union[bool, PokeReturnValue]:
        """Calls the callable once."""
        ctx = dict(context)
        ctx["templates_dict"] = self.templates_dict
        got = self.python_callable(*self.op_args, **determine_kwargs(
            self.python_callable, self.op_args, ctx, self.op_kwargs))
        return got if isinstance(got, PokeReturnValue) else bool(got)


__all__ = ["PythonSensor", "PokeReturnValue"]
