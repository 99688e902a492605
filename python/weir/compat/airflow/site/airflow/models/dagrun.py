"""airflow.models.dagrun: DagRun, the name DAG files annotate `dag_run` with; on weir the
context's `dag_run` (its run_id, conf, logical_date, run_type, data interval)."""

from _weir_airflow.context import DagRunInfo as DagRun

__all__ = ["DagRun"]
