"""Custom timetables that fail: one raises when it is asked for a run."""

from datetime import datetime

from airflow import DAG
from airflow.operators.empty import EmptyOperator
from airflow.timetables.base import Timetable


class NoCalendar(Timetable):
    def next_dagrun_info(self, *, last_automated_data_interval, restriction):
        raise ValueError("the holiday calendar is not reachable")


with DAG("no_calendar", schedule=NoCalendar(), start_date=datetime(2024, 1, 1)):
    EmptyOperator(task_id="t")
