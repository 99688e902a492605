"""airflow.models.taskinstance: TaskInstance, the name DAG files annotate `ti` with; on weir
the context's `ti` (its XComs, ids, try number, dag_run)."""

from _weir_airflow.run_task import TaskInstance

__all__ = ["TaskInstance"]
