"""airflow.models.param: `Param`, a DAG or task param with a default and a JSON Schema
(weir's Airflow-compatible layer).

`Param(default, description=None, **schema)` as in Airflow 2.x.  The DAG processor writes a
DAG's Params into weir's document as schemas (_weir_airflow/spec.py), and the server checks a
trigger's conf against them before a run is made (a bad conf is refused with 400 naming the
param: docs/dags.md, "Params with a schema").  In a task, `params` holds the values;
`resolve()` returns the value (checked already by the server) or raises ParamValidationError
when there is none.
"""

from __future__ import annotations

import copy
from typing import Any, Dict, ItemsView, Iterator, Mapping, MutableMapping, Optional


class _NoDefault:
    """Airflow's NOTSET: a Param without a default."""

    def __repr__(self) -> str:
        return "NOTSET"

    def __bool__(self) -> bool:
        return False


NOTSET: Any = _NoDefault()


class Param:
    """A param's default value and its JSON Schema (`type`, `enum`, `minimum`, ...)."""

    CLASS_IDENTIFIER = "__class"

    def __init__(self, default: Any = NOTSET, description: Optional[str] = None,
                 **kwargs: Any) -> None:
        self.value = default
        self.description = description
        self.schema: Dict[str, Any] = dict(kwargs)
        if description is not None:
            self.schema.setdefault("description", description)

    def __copy__(self) -> "Param":
        return Param(self.value, self.description,
                     **{k: v for k, v in self.schema.items() if k != "description"})

    def has_value(self) -> bool:
        """Whether a value (the default, or one given) is set."""
        return self.value is not NOTSET

    def resolve(self, value: Any = NOTSET, suppress_exception: bool = False) -> Any:
        """The value (`value` when given, else the Param's); raises ParamValidationError
        when there is none (the server checked the schema when the run was made)."""
        from airflow.exceptions import ParamValidationError

        final = value if value is not NOTSET else self.value
        if final is NOTSET:
            if suppress_exception:
                return None
            raise ParamValidationError("No value passed and Param has no default value")
        return final

    def dump(self) -> Dict[str, Any]:
        """Airflow's form: value, description and schema."""
        return {"__class": "airflow.models.param.Param",
                "value": None if self.value is NOTSET else self.value,
                "description": self.description, "schema": dict(self.schema)}

    def __repr__(self) -> str:
        return "Param(%r, %r)" % (self.value, self.schema)


class ParamsDict(MutableMapping[str, Any]):
    """A mapping of names to Params (plain values become Params), read as their values."""

    def __init__(self, dict_obj: Optional[Mapping[str, Any]] = None,
                 suppress_exception: bool = False) -> None:
        self.__dict: Dict[str, Param] = {}
        self.suppress_exception = suppress_exception
        for k, v in (dict_obj or {}).items():
            self[k] = v

    def __setitem__(self, key: str, value: Any) -> None:
        if isinstance(value, Param):
            self.__dict[key] = value
        elif key in self.__dict:
            param = copy.copy(self.__dict[key])
            param.value = value
            self.__dict[key] = param
        else:
            self.__dict[key] = Param(value)

    def __getitem__(self, key: str) -> Any:
        return self.__dict[key].resolve(suppress_exception=self.suppress_exception)

    def __delitem__(self, key: str) -> None:
        del self.__dict[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self.__dict)

    def __len__(self) -> int:
        return len(self.__dict)

    def get_param(self, key: str) -> Param:
        """The Param itself."""
        return self.__dict[key]

    def items(self) -> ItemsView[str, Any]:
        return ItemsView(self)

    def dump(self) -> Dict[str, Any]:
        """The values."""
        return {k: self.__dict[k].resolve(suppress_exception=True) for k in self.__dict}

    def validate(self) -> Dict[str, Any]:
        """The values, each resolved (ParamValidationError for one without a value)."""
        return {k: p.resolve() for k, p in self.__dict.items()}


class DagParam:
    """A parameter of a `@dag` function, as the function's body sees it (Airflow 2): the
    DAG gets a param of its name, with the parameter's default; a task given it as an
    argument receives, when it runs, the run's value of that param (the trigger's conf over
    the default)."""

    def __init__(self, current_dag: Any, name: str, default: Any = NOTSET) -> None:
        if default is not NOTSET:
            current_dag.params[name] = default
        self._name = name
        self._default = default

    def resolve(self, context: Dict[str, Any]) -> Any:
        """The run's value (AirflowException when the run has none)."""
        from airflow.exceptions import AirflowException

        params = context.get("params") or {}
        if self._name in params:
            return params[self._name]
        if self._default is not NOTSET:
            return self._default
        raise AirflowException("No value could be resolved for parameter %s" % self._name)

    def __repr__(self) -> str:
        return "DagParam(%r)" % self._name


def resolve_dag_params(value: Any, context: Dict[str, Any]) -> Any:
    """`value` (an operator's argument) with each DagParam in it, in lists, tuples and dict
    values too, replaced by its value for the running task's `context`."""
    if isinstance(value, DagParam):
        return value.resolve(context)
    if isinstance(value, dict):
        return {k: resolve_dag_params(v, context) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return type(value)(resolve_dag_params(v, context) for v in value)
    return value
