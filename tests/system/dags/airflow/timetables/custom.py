"""DAGs on custom timetables, as Airflow users write them: one from the plugins folder, one
defined in this file (8-hour shifts, each run made half an hour after its shift ends)."""

from datetime import datetime, timedelta

from airflow import DAG
from airflow.decorators import task
from airflow.operators.empty import EmptyOperator
from airflow.timetables.base import DagRunInfo, DataInterval, Timetable

from workday_timetable import WorkdayTimetable


class ShiftTimetable(Timetable):
    """Shifts from 06:00, 14:00 and 22:00."""

    @property
    def summary(self):
        return "each shift"

    def next_dagrun_info(self, *, last_automated_data_interval, restriction):
        if last_automated_data_interval is None:
            start = restriction.earliest
        else:
            start = last_automated_data_interval.end
        if restriction.latest is not None and start > restriction.latest:
            return None
        end = start + timedelta(hours=8)
        return DagRunInfo(run_after=end + timedelta(minutes=30),
                          data_interval=DataInterval(start=start, end=end))


with DAG("workdays", schedule=WorkdayTimetable(), start_date=datetime(2024, 1, 1),
         end_date=datetime(2024, 2, 9), catchup=True, max_active_runs=30):
    EmptyOperator(task_id="load")


with DAG("shifts", timetable=ShiftTimetable(), start_date=datetime(2024, 3, 1, 6),
         end_date=datetime(2024, 3, 5, 5), max_active_runs=16):

    @task
    def facts(data_interval_start=None, data_interval_end=None, logical_date=None,
              dag_run=None):
        return {"start": data_interval_start.isoformat(), "end": data_interval_end.isoformat(),
                "logical": logical_date.isoformat(), "run_type": dag_run.run_type}

    facts()
