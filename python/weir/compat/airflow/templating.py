"""`weir.compat.airflow.templating` is `_weir_airflow.templating` (site/_weir_airflow/templating.py), the module a
task's process imports without the `weir` package (docs/internals/airflow.md): the same module
object, so that names and monkeypatches are shared."""

import importlib
import os
import sys

_SITE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "site")
if _SITE not in sys.path:
    sys.path.insert(0, _SITE)
sys.modules[__name__] = importlib.import_module("_weir_airflow.templating")
