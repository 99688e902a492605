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
