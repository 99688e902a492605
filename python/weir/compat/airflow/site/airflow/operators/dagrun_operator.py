"""airflow.operators.dagrun_operator: the old path of TriggerDagRunOperator."""

from airflow.operators.trigger_dagrun import TriggerDagRunOperator

__all__ = ["TriggerDagRunOperator"]
