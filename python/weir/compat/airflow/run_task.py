"""`python3 -m weir.compat.airflow.run_task ...` runs `_weir_airflow.run_task`, which lives in
site/ beside weir's `airflow`.  The server and the tasks run `python3 -m _weir_airflow.run_task`
with site/ on PYTHONPATH: it does not import the `weir` package (docs/internals/airflow.md)."""

import os
import runpy
import sys

if __name__ == "__main__":
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "site"))
    runpy.run_module("_weir_airflow.run_task", run_name="__main__", alter_sys=True)
