"""`airflow.macros` for DAG files: weir's macros module (weir/compat/airflow/macros.py),
the same functions and modules that templates see as `{{ macros }}`."""

from weir.compat.airflow.macros import *  # noqa: F401,F403
from weir.compat.airflow.macros import __all__ as __all__  # noqa: F401
