"""airflow.timetables: the timetables a DAG's schedule may be (weir's Airflow-compatible
layer): `interval` (CronDataIntervalTimetable, DeltaDataIntervalTimetable of a timedelta or a
relativedelta), `trigger` (CronTriggerTimetable), `datasets` (DatasetOrTimeSchedule), `events`
(EventsTimetable), `simple` (NullTimetable, OnceTimetable, ContinuousTimetable) and `base`
(what a custom timetable subclasses: the DAG processor calls it, _weir_airflow/timetable_runs.py).  They
hold their arguments; _weir_airflow/spec.py writes them into weir's document
(docs/airflow.md)."""
