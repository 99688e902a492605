"""Corpus: sensors that need no network, as example_sensors (BashSensor, PythonSensor,
FileSensor on a file a task writes, deferrable too, TimeSensor and TimeDeltaSensor and their
*Async, DayOfWeekSensor, @task.sensor, soft_fail after a timeout, a trigger rule set after
the task is made)."""
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
from airflow.sensors.time_sensor import TimeSensor, TimeSensorAsync
from airflow.sensors.weekday import DayOfWeekSensor
from airflow.utils.trigger_rule import TriggerRule
from airflow.utils.weekday import WeekDay

NOW = datetime.datetime.now(tz=datetime.timezone.utc)
NOT_TODAY = [d for d in WeekDay if d != NOW.isoweekday()][0]

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

    on_time = [TimeSensor(task_id="time_passed", target_time=datetime.time(0, 0)),
               TimeSensorAsync(task_id="time_passed_async", target_time=datetime.time(0, 0))]
    late = TimeSensor(task_id="time_not_yet", timeout=1, soft_fail=True, poke_interval=1,
                      target_time=datetime.time(23, 59, 59, 999999))
    never = BashSensor(task_id="bash_never", bash_command="exit 1", timeout=2, soft_fail=True,
                       poke_interval=1)
    weekday = DayOfWeekSensor(task_id="not_today", timeout=2, soft_fail=True, poke_interval=1,
                              week_day=NOT_TODAY)
    deferred = FileSensor(task_id="wait_file_deferrable", deferrable=True, poke_interval=1,
                          timeout=60,
                          filepath="{{ params.where }}/corpus_{{ run_id | replace(':', '_') | replace('+', '_') }}")
    write >> deferred
    after_all = BashOperator(task_id="after_all", bash_command="date")
    after_all.trigger_rule = TriggerRule.NONE_FAILED
    [*on_time, late, never, weekday, deferred] >> after_all
