"""A timetable as a plugin ships it (the plugins folder beside the DAG folder): one run for
each workday's data, made once the day is over; Saturdays and Sundays have none."""

from datetime import timedelta

import pendulum

from airflow.plugins_manager import AirflowPlugin
from airflow.timetables.base import DagRunInfo, DataInterval, Timetable


def midnight(t):
    return pendulum.datetime(t.year, t.month, t.day, tz="UTC")


def first_workday(day):
    while day.weekday() >= 5:
        day = day + timedelta(days=1)
    return day


class WorkdayTimetable(Timetable):
    description = "One run for each workday, made when the day is over"

    @property
    def summary(self):
        return "after each workday"

    def infer_manual_data_interval(self, *, run_after):
        day = midnight(run_after) - timedelta(days=1)
        while day.weekday() >= 5:
            day = day - timedelta(days=1)
        return DataInterval(day, day + timedelta(days=1))

    def next_dagrun_info(self, *, last_automated_data_interval, restriction):
        if last_automated_data_interval is not None:
            start = first_workday(midnight(last_automated_data_interval.end))
        elif restriction.earliest is None:
            return None
        else:
            start = first_workday(midnight(restriction.earliest))
            if not restriction.catchup:
                start = max(start, first_workday(midnight(pendulum.now("UTC"))))
        if restriction.latest is not None and start > restriction.latest:
            return None
        return DagRunInfo.interval(start=start, end=start + timedelta(days=1))


class WorkdayPlugin(AirflowPlugin):
    name = "workday_timetable"
    timetables = [WorkdayTimetable]
