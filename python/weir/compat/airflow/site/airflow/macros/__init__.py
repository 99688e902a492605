"""`airflow.macros` for DAG files: weir's macros module (_weir_airflow/macros.py), the same
functions and modules that templates see as `{{ macros }}`."""

import sys

from _weir_airflow import macros as _macros

sys.modules[__name__] = _macros
