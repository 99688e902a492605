"""A custom timetable that never answers."""

from datetime import datetime

from airflow import DAG
from airflow.operators.empty import EmptyOperator
from airflow.timetables.base import Timetable


class Forever(Timetable):
    def next_dagrun_info(self, *, last_automated_data_interval, restriction):
        while True:
            pass


with DAG("forever_asking", schedule=Forever(), start_date=datetime(2024, 1, 1)):
    EmptyOperator(task_id="t")
