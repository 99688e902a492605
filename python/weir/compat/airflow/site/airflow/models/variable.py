"""airflow.models.variable: Variable, read from weir's variables (docs/connections.md).

A task's process gets the variables its DAG file names literally (`Variable.get("KEY")`,
`{{ var.value.KEY }}`: the processor finds them, _weir_airflow.spec) and the server has, as
WEIR_VARIABLES (their keys) and WEIR_VARIABLE_<i> (their values); Airflow's own
AIRFLOW_VAR_<KEY> environment variables are read first, as Airflow's backend does.  At a DAG
file's parse (no task) the server gives the variables the file names literally, secret ones
refused (_weir_airflow.parse_vars).

`Variable.set`, `.update` and `.delete` in a task are kept in WRITES (read back by this
process at once) and travel in the try's output (`weir_set_variables`, written by run_task):
the server writes them when the try succeeds, for the keys the DAG file names
(docs/airflow.md, "Variables"; docs/security.md).
"""

from __future__ import annotations

import json
import os
from typing import Any, Dict, Mapping, Optional

_NOTSET: Any = object()


def task_variables(env: Optional[Mapping[str, str]] = None) -> Dict[str, str]:
    """The variables weir gave this task: key -> text."""
    env = os.environ if env is None else env
    keys = [k for k in env.get("WEIR_VARIABLES", "").split(",") if k]
    return {k: env["WEIR_VARIABLE_%d" % i] for i, k in enumerate(keys)
            if "WEIR_VARIABLE_%d" % i in env}


# This task's writes: key -> text, or None for a delete.
WRITES: Dict[str, Optional[str]] = {}


def lookup(key: str, env: Optional[Mapping[str, str]] = None) -> Optional[str]:
    """A variable's text: this task's own write, AIRFLOW_VAR_<KEY>, then what weir gave the
    task; None when none has it."""
    if env is None and key in WRITES:
        return WRITES[key]
    env = os.environ if env is None else env
    text = env.get("AIRFLOW_VAR_" + key.upper())
    return text if text is not None else task_variables(env).get(key)


class Variable:
    """Airflow's Variable: `Variable.get(key, default_var=..., deserialize_json=False)`."""

    def __init__(self, key: str, val: Any = None, description: Optional[str] = None) -> None:
        self.key = key
        self.val = val
        self.description = description

    @classmethod
    def get(cls, key: str, default_var: Any = _NOTSET, deserialize_json: bool = False) -> Any:
        """The variable's value (decoded as JSON with deserialize_json); default_var when it
        is not set, else KeyError as in Airflow."""
        text = lookup(key)
        why = ""
        if text is None and not os.environ.get("WEIR_OUTPUT"):  # not a task: the file's parse
            from _weir_airflow import parse_vars

            given, text, why = parse_vars.read(key)  # a secret key raises, whatever the default
            why = "" if given else why
        if text is None:
            if default_var is not _NOTSET:
                return default_var
            raise KeyError(f"Variable {key} does not exist" + (f" ({why})" if why else ""))
        return json.loads(text) if deserialize_json else text

    @classmethod
    def setdefault(cls, key: str, default: Any, description: Optional[str] = None,
                   deserialize_json: bool = False) -> Any:
        """The variable's value, or `default` when it is not set (weir does not store it:
        a task cannot write the server's variables)."""
        return cls.get(key, default_var=default, deserialize_json=deserialize_json)

    @classmethod
    def set(cls, key: str, value: Any, description: Optional[str] = None,
            serialize_json: bool = False, **kwargs: Any) -> None:
        """Sets the variable (JSON text with serialize_json): this task reads it back at
        once; the server writes it when the try succeeds (the keys the DAG file names)."""
        _writing(key)
        WRITES[key] = json.dumps(value, indent=2) if serialize_json else str(value)

    @classmethod
    def update(cls, key: str, value: Any, serialize_json: bool = False, **kwargs: Any) -> None:
        """Sets a variable that exists; KeyError when it does not, as in Airflow."""
        if lookup(key) is None:
            raise KeyError(f"Variable {key} does not exist")
        cls.set(key, value, serialize_json=serialize_json)

    @classmethod
    def delete(cls, key: str, **kwargs: Any) -> int:
        """Deletes the variable (when the try succeeds); 1 when it existed, else 0."""
        _writing(key)
        existed = lookup(key) is not None
        WRITES[key] = None
        return 1 if existed else 0


def _writing(key: str) -> None:
    """A write is a task's: refused outside one (the DAG file's import, say)."""
    if not os.environ.get("WEIR_OUTPUT"):
        from airflow.exceptions import AirflowException

        raise AirflowException(
            "Variable.set(%r): weir writes variables from a running task only (its output "
            "carries them); outside one set them through the REST API (POST "
            "/api/v1/variables) or `weir variables set`" % key)
