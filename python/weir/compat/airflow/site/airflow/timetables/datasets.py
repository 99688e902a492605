"""airflow.timetables.datasets: DatasetOrTimeSchedule (weir's Airflow-compatible layer)."""

from __future__ import annotations

from typing import Any, Collection, Union

from airflow.datasets import BaseDataset, DatasetAll


class DatasetOrTimeSchedule:
    """Runs on `timetable` and also whenever `datasets` were updated."""

    def __init__(self, *, timetable: Any,
                 datasets: Union[Collection[BaseDataset], BaseDataset]) -> None:
        self.timetable = timetable
        if isinstance(datasets, BaseDataset):
            self.datasets: BaseDataset = datasets
        else:
            self.datasets = DatasetAll(*datasets)

    @property
    def summary(self) -> str:
        return "Dataset or %s" % getattr(self.timetable, "summary", self.timetable)
