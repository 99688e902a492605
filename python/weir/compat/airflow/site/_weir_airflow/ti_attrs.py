"""_weir_airflow.ti_attrs: the attributes of Airflow's TaskInstance that a task's code and
its callbacks read besides its ids and XComs (`ti.state`, `ti.max_tries`, `ti.start_date`,
`ti.hostname`, `ti.operator`, `ti.pool`, ...), for run_task.TaskInstance: the values of the
running try, computed in its process."""

import datetime as _dt
import os
from typing import Any, Optional


class TaskInstanceAttrs:
    """A mixin over `task` (the operator) and `try_number`, set by its subclass."""

    task: Any
    try_number: int
    dag_id: str
    task_id: str
    run_id: str
    map_index: int
    # the try is running while its process reads these (Airflow's `running`)
    state: str = "running"
    end_date: Optional[_dt.datetime] = None
    duration: Optional[float] = None
    _started: Optional[_dt.datetime] = None

    @property
    def start_date(self) -> _dt.datetime:
        """When the try started (its process, in UTC)."""
        if self._started is None:
            self._started = _dt.datetime.now(_dt.timezone.utc)
        return self._started

    @property
    def max_tries(self) -> int:
        """The task's retries (Airflow's max_tries of a task instance not cleared)."""
        return int(getattr(self.task, "retries", 0) or 0)

    @property
    def next_try_number(self) -> int:
        """The number of the try after this one."""
        return self.try_number + 1

    @property
    def operator(self) -> Optional[str]:
        """The operator's class name."""
        return type(self.task).__name__ if self.task is not None else None

    @property
    def pool(self) -> str:
        """The task's pool (`default_pool` when it names none)."""
        return str(getattr(self.task, "pool", None) or "default_pool")

    @property
    def pool_slots(self) -> int:
        """The slots the task takes in its pool."""
        return int(getattr(self.task, "pool_slots", 1))

    @property
    def queue(self) -> str:
        """The task's queue (`default` when it names none)."""
        return str(getattr(self.task, "queue", None) or "default")

    @property
    def priority_weight(self) -> int:
        """The task's own priority weight."""
        return int(getattr(self.task, "priority_weight", 1))

    @property
    def log_url(self) -> str:
        """Where a person reads the try's log (what failure callbacks put in their alerts):
        Airflow's `[webserver] base_url` (AIRFLOW__WEBSERVER__BASE_URL; Airflow's default
        http://localhost:8080), then weir's web UI address of the run, the task and its
        map index in the query (docs/airflow.md)."""
        from urllib.parse import quote

        base = os.environ.get("AIRFLOW__WEBSERVER__BASE_URL") or "http://localhost:8080"
        return "%s/#/dags/%s?tab=graph&run=%s&task_id=%s&map_index=%d" % (
            base.rstrip("/"), quote(self.dag_id, safe=""), quote(self.run_id, safe=""),
            quote(self.task_id, safe=""), self.map_index)

    @property
    def hostname(self) -> str:
        """The machine the try runs on."""
        import socket

        return socket.gethostname()

    @property
    def pid(self) -> int:
        """The try's process."""
        return os.getpid()

    @property
    def unixname(self) -> str:
        """The user the try runs as."""
        import getpass

        return getpass.getuser()
