"""airflow.utils.context: the type of a task's context, as DAG files annotate execute(self,
context: Context) with it.  On weir the context is the plain dict that
_weir_airflow.context.build_context() makes; Context names that type."""

from typing import Any, Dict

Context = Dict[str, Any]

__all__ = ["Context"]
