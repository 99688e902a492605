"""airflow.sensors.python: PythonSensor, a callable poked in the task's process."""

from __future__ import annotations

from typing import Any, Callable, Collection, Dict, List, Mapping, Optional, Sequence, Union

from airflow.operators.python import determine_kwargs, take_callable
from airflow.sensors.base import BaseSensorOperator, PokeReturnValue


class PythonSensor(BaseSensorOperator):
    """Waits until `python_callable(*op_args, **op_kwargs)` (with the context's keys it
    names) returns a true value or a PokeReturnValue that is done."""

    python_callable: Callable[..., Any]  # these four: take_callable()
    op_args: List[Any]
    op_kwargs: Dict[str, Any]
    templates_dict: Optional[Dict[str, Any]]
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
        take_callable(self, python_callable, op_args, op_kwargs, templates_dict)

    def poke(self, context: Dict[str, Any]) -> Union[bool, PokeReturnValue]:
        """Calls the callable once."""
        ctx = dict(context)
        ctx["templates_dict"] = self.templates_dict
        got = self.python_callable(*self.op_args, **determine_kwargs(
            self.python_callable, self.op_args, ctx, self.op_kwargs))
        return got if isinstance(got, PokeReturnValue) else bool(got)


__all__ = ["PythonSensor", "PokeReturnValue"]
