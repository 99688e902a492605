"""airflow.utils.types: DagRunType, a run's kind as its id's prefix names it."""

from enum import Enum


class DagRunType(str, Enum):
    """The kinds of runs."""

    BACKFILL_JOB = "backfill"
    SCHEDULED = "scheduled"
    MANUAL = "manual"
    DATASET_TRIGGERED = "dataset_triggered"

    def __str__(self) -> str:
        return self.value

    def generate_run_id(self, logical_date: object) -> str:
        """The run id Airflow (and weir) gives a run of this kind and date."""
        iso = getattr(logical_date, "isoformat")()
        return "%s__%s" % (self.value, iso)


__all__ = ["DagRunType"]
