"""Corpus: sensors that need no network, as example_sensors (BashSensor, PythonSensor,
FileSensor on a file a task writes, TimeDeltaSensor, @task.sensor, soft_fail)."""
import datetime
import tempfile

import pendulum

from airflow.decorators import task
from airflow.models.dag import DAG
from airflow.sensors.base import PokeReturnValue
from airflow.sensors.bash import BashSensor
from airflow.sensors.filesystem import FileSensor
from airflow.sensors.python import PythonSensor
from airflow.sensors.time_delta import TimeDeltaSensor
from airflow.operators.bash import BashOperator

with DAG(dag_id="corpus_sensors", schedule=None,
         start_date=pendulum.datetime(2024, 1, 1, tz="UTC"), catchup=False,
         tags=["corpus"], params={"where": tempfile.gettempdir()}):
    BashSensor(task_id="bash_true", bash_command="exit 0", poke_interval=1, timeout=30)
    PythonSensor(task_id="py_true", python_callable=lambda: True, poke_interval=1, timeout=30)
    PythonSensor(task_id="py_soft", python_callable=lambda: False, poke_interval=1, timeout=2,
                 soft_fail=True)
    TimeDeltaSensor(task_id="delta_zero", delta=datetime.timedelta(seconds=0), poke_interval=1)
    write = BashOperator(task_id="write",
                         bash_command="touch {{ params.where }}/corpus_{{ run_id | replace(':', '_') | replace('+', '_') }}")
    wait = FileSensor(task_id="wait_file", poke_interval=1, timeout=60, mode="reschedule",
                      filepath="{{ params.where }}/corpus_{{ run_id | replace(':', '_') | replace('+', '_') }}")
    write >> wait

    @task.sensor(poke_interval=1, timeout=30, mode="reschedule")
    def counted():
        return PokeReturnValue(is_done=True, xcom_value=41 + 1)

    counted()
