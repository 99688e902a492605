"""airflow.exceptions: the exceptions DAG files raise and catch."""


class AirflowException(Exception):
    """A task or DAG error (the base of the others)."""


class AirflowSkipException(AirflowException):
    """Raised by a task to end as skipped."""


class AirflowFailException(AirflowException):
    """Raised by a task to fail at once, without retry."""


class AirflowSensorTimeout(AirflowException):
    """A sensor waited past its timeout."""


class DuplicateTaskIdFound(AirflowException):
    """Two tasks of one DAG have the same id."""


class TaskNotFound(AirflowException):
    """No task of that id."""


class AirflowDagDuplicatedIdException(AirflowException):
    """Two files define the same dag_id."""


class AirflowNotFoundException(AirflowException):
    """A connection (or another named thing) is not defined."""


class ParamValidationError(AirflowException):
    """A param's value does not fit its Param (or none was given and it has no default)."""


class AirflowConfigException(AirflowException):
    """A configuration key is missing or wrong."""


class AirflowBadRequest(AirflowException):
    """A request that is not valid (Airflow's HTTP 400)."""

    status_code = 400


class AirflowTaskTimeout(BaseException):
    """A task ran past its execution_timeout (a BaseException, as in Airflow 2, so that an
    `except Exception` does not swallow it). weir ends such a try with SIGTERM, which the
    task sees as AirflowException("Task received SIGTERM signal"); the class is here for the
    files that catch or raise it."""


class AirflowTaskTerminated(BaseException):
    """A task was terminated from outside."""


class RemovedInAirflow3Warning(DeprecationWarning):
    """The warning Airflow 2 gives for a name Airflow 3 removes."""
