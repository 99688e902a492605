"""_weir_airflow.tasklog: the standard `logging` of a task's process, set up as Airflow sets
up a task's: records of level INFO and above (`logging.info(...)`, `self.log.info(...)`,
`logging.getLogger("airflow.task")`) go to the task's log, in Airflow's format
`[TIME] {FILE:LINE} LEVEL - MESSAGE`. Without it Python keeps only warnings and errors."""

import logging
import sys

FORMAT = "[%(asctime)s] {%(filename)s:%(lineno)d} %(levelname)s - %(message)s"


def setup() -> None:
    """The root logger at INFO, writing to stderr (the task's log); once per process, and not
    over a handler the DAG file set up itself."""
    root = logging.getLogger()
    if root.handlers:
        return
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(logging.Formatter(FORMAT))
    root.addHandler(handler)
    root.setLevel(logging.INFO)
