"""airflow.utils.state: the states of runs and task instances by their names, as DAG files
compare and list them (`allowed_states=[State.SUCCESS]`, `DagRunState.FAILED`)."""

from enum import Enum


class TaskInstanceState(str, Enum):
    """A task instance's states (weir's are the same words)."""

    REMOVED = "removed"
    SCHEDULED = "scheduled"
    QUEUED = "queued"
    RUNNING = "running"
    SUCCESS = "success"
    RESTARTING = "restarting"
    FAILED = "failed"
    UP_FOR_RETRY = "up_for_retry"
    UP_FOR_RESCHEDULE = "up_for_reschedule"
    UPSTREAM_FAILED = "upstream_failed"
    SKIPPED = "skipped"
    DEFERRED = "deferred"

    def __str__(self) -> str:
        return self.value


class DagRunState(str, Enum):
    """A run's states."""

    QUEUED = "queued"
    RUNNING = "running"
    SUCCESS = "success"
    FAILED = "failed"

    def __str__(self) -> str:
        return self.value


class State:
    """Airflow's older names of both."""

    NONE = None
    REMOVED = TaskInstanceState.REMOVED
    SCHEDULED = TaskInstanceState.SCHEDULED
    QUEUED = TaskInstanceState.QUEUED
    RUNNING = TaskInstanceState.RUNNING
    SUCCESS = TaskInstanceState.SUCCESS
    RESTARTING = TaskInstanceState.RESTARTING
    FAILED = TaskInstanceState.FAILED
    UP_FOR_RETRY = TaskInstanceState.UP_FOR_RETRY
    UP_FOR_RESCHEDULE = TaskInstanceState.UP_FOR_RESCHEDULE
    UPSTREAM_FAILED = TaskInstanceState.UPSTREAM_FAILED
    SKIPPED = TaskInstanceState.SKIPPED
    DEFERRED = TaskInstanceState.DEFERRED
    finished = frozenset([SUCCESS, FAILED, SKIPPED, UPSTREAM_FAILED, REMOVED])
    unfinished = frozenset([None, SCHEDULED, QUEUED, RUNNING, UP_FOR_RETRY, UP_FOR_RESCHEDULE,
                            RESTARTING, DEFERRED])
    failed_states = frozenset([FAILED, UPSTREAM_FAILED])
    success_states = frozenset([SUCCESS, SKIPPED])


__all__ = ["DagRunState", "State", "TaskInstanceState"]
