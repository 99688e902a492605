"""airflow.sensors.filesystem: FileSensor.  weir pokes it itself (a `sensor: file` task,
_weir_airflow.sensors): no process waits in reschedule mode."""

from __future__ import annotations

import glob
import os
from typing import Any, Dict, Sequence

from airflow.sensors.base import BaseSensorOperator


class FileSensor(BaseSensorOperator):
    """Waits for a file or a glob under the `fs_conn_id` connection's path (`fs_default`:
    the root, as Airflow's default connection)."""

    template_fields: Sequence[str] = ("filepath",)

    def __init__(self, *, filepath: str, fs_conn_id: str = "fs_default",
                 recursive: bool = False, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.filepath = filepath
        self.fs_conn_id = fs_conn_id
        self.recursive = recursive

    def poke(self, context: Dict[str, Any]) -> bool:
        """A match of the glob (a run in Python: `fs_default` only)."""
        full = os.path.join("/", self.filepath)
        for path in glob.glob(full, recursive=self.recursive):
            if os.path.isfile(path):
                return True
            for _, _, files in os.walk(path):
                if files:
                    return True
        return False


__all__ = ["FileSensor"]
