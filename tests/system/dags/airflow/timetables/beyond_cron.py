"""Schedules beyond cron, written as an Airflow 2.x user writes them: a monthly relativedelta
with catchup, an EventsTimetable, and @continuous."""
import pendulum
from dateutil.relativedelta import relativedelta

from airflow import DAG
from airflow.operators.bash import BashOperator
from airflow.operators.python import PythonOperator
from airflow.timetables.events import EventsTimetable


def facts(ds, data_interval_start, data_interval_end, dag_run):
    return {"ds": ds, "start": data_interval_start.isoformat(),
            "end": data_interval_end.isoformat(), "run_type": dag_run.run_type}


with DAG("monthly", schedule=relativedelta(months=1), catchup=True,
         start_date=pendulum.datetime(2024, 1, 31, 6, tz="UTC"),
         end_date=pendulum.datetime(2024, 5, 1, tz="UTC")):
    PythonOperator(task_id="facts", python_callable=facts)

with DAG("match_days", catchup=False, start_date=pendulum.datetime(2024, 6, 1, tz="UTC"),
         schedule=EventsTimetable(event_dates=[
             pendulum.datetime(2024, 3, 1, 10, tz="UTC"),
             pendulum.datetime(2024, 2, 1, tz="Europe/Amsterdam"),
             pendulum.datetime(2099, 1, 1, tz="UTC"),
         ], restrict_to_events=True, description="three matches")):
    PythonOperator(task_id="facts", python_callable=facts)

with DAG("forever", schedule="@continuous", max_active_runs=1, catchup=False,
         start_date=pendulum.datetime(2024, 1, 1, tz="UTC")):
    BashOperator(task_id="tick", bash_command="true")
