"""airflow.operators.subdag: SubDagOperator, deprecated since Airflow 2.0 and gone in 3.0.
weir refuses it where the DAG file makes one, with the error naming what to write instead
(docs/airflow.md, "Where weir differs")."""

from __future__ import annotations

from typing import Any

from airflow.exceptions import AirflowException


class SubDagOperator:
    """Refused: a sub-DAG runs inside its parent's run in Airflow (its own scheduling, pools
    and states); weir runs each DAG's runs on their own."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        raise AirflowException(
            "SubDagOperator(task_id=%r): weir does not run sub-DAGs (deprecated since Airflow "
            "2.0); put the tasks in a TaskGroup, or trigger the other DAG with "
            "TriggerDagRunOperator(wait_for_completion=True)" % (kwargs.get("task_id"),))
