"""Corpus: LatestOnlyOperator as example_latest_only_with_trigger (an all_done task below
it; a manual run is never skipped)."""
import datetime

import pendulum

from airflow.models.dag import DAG
from airflow.operators.empty import EmptyOperator
from airflow.operators.latest_only import LatestOnlyOperator
from airflow.utils.trigger_rule import TriggerRule

with DAG(dag_id="corpus_latest_only", schedule=datetime.timedelta(hours=6),
         start_date=pendulum.datetime(2024, 1, 1, tz="UTC"), catchup=False,
         tags=["corpus"]):
    latest = LatestOnlyOperator(task_id="latest")
    t1 = EmptyOperator(task_id="t1")
    t2 = EmptyOperator(task_id="t2")
    t3 = EmptyOperator(task_id="t3")
    t4 = EmptyOperator(task_id="t4", trigger_rule=TriggerRule.ALL_DONE)
    latest >> t1 >> [t3, t4]
    t2 >> [t3, t4]
