"""airflow.timetables: the timetables a DAG's schedule may be (weir's Airflow-compatible
layer): `interval` (CronDataIntervalTimetable, DeltaDataIntervalTimetable), `trigger`
(CronTriggerTimetable) and `datasets` (DatasetOrTimeSchedule).  They hold their arguments;
_weir_airflow/spec.py writes them into weir's document (docs/airflow.md)."""
