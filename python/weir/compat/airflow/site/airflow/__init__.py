"""weir's `airflow` package: what Airflow DAG files import, so that they run on weir
unchanged (docs/airflow.md).  The processor and each task's runner put the folder that holds
it first on sys.path."""

from airflow.models.dag import DAG

__version__ = "2.10.0"

__all__ = ["DAG", "__version__"]
