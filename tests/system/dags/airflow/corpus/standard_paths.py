"""Corpus: the same operators and sensors imported from the standard provider's paths, as
Airflow 2.10's and 3's example DAGs import them."""
import datetime

import pendulum

from airflow.models.dag import DAG
from airflow.providers.standard.operators.bash import BashOperator
from airflow.providers.standard.operators.empty import EmptyOperator
from airflow.providers.standard.operators.latest_only import LatestOnlyOperator
from airflow.providers.standard.operators.python import BranchPythonOperator, PythonOperator
from airflow.providers.standard.sensors.bash import BashSensor
from airflow.providers.standard.sensors.python import PythonSensor
from airflow.providers.standard.sensors.time_delta import TimeDeltaSensor
from airflow.utils.trigger_rule import TriggerRule

with DAG(dag_id="corpus_standard_paths", schedule=None, catchup=False,
         start_date=pendulum.datetime(2024, 1, 1, tz="UTC"), tags=["corpus"]):
    start = EmptyOperator(task_id="start")
    ready = BashSensor(task_id="ready", bash_command="exit 0", poke_interval=1)
    soon = TimeDeltaSensor(task_id="soon", delta=datetime.timedelta(seconds=0))
    ok = PythonSensor(task_id="ok", python_callable=lambda: True, poke_interval=1)
    pick = BranchPythonOperator(task_id="pick", python_callable=lambda: "chosen")
    chosen = PythonOperator(task_id="chosen", python_callable=lambda: "yes")
    other = BashOperator(task_id="other", bash_command="echo no")
    latest = LatestOnlyOperator(task_id="latest")
    end = EmptyOperator(task_id="end", trigger_rule=TriggerRule.NONE_FAILED_MIN_ONE_SUCCESS)
    start >> [ready, soon, ok] >> pick >> [chosen, other] >> end
    start >> latest
