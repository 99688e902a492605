"""Typed answers of the API: the states as enums, a job, a task, a DAG run and a task
instance as dataclasses.

    job = weir.Client().get_job(3)               # a Job, not a dict
    if job.state is JobState.FAILED: print(job.reason, job.tasks[0].exit_code)

The states' values are the server's names exactly (src/model/states.c): each enum is also a
`str`, so `JobState.RUNNING == "running"` and a state can be passed wherever the API takes a
state's name.  A name this package does not know (a newer server's) still reads: it becomes
a member outside the listed ones (`JobState("paused").value == "paused"`).

Each dataclass is made by `from_json(obj)` from the API's JSON object: the fields listed
here typed, every other key kept in `extra`, so that a newer server's fields never break
the client.  Times are the API's text (ISO 8601, UTC), or None.
"""

import dataclasses
from enum import Enum
from typing import Any, ClassVar, Dict, List, Mapping, Optional, Type, TypeVar


class _State(str, Enum):
    """A state's enum: str-valued, its str() the server's name."""

    def __str__(self) -> str:
        return str(self.value)

    @classmethod
    def _missing_(cls, value: object) -> Any:
        # a name from a newer server: a member of its own, outside the listed ones
        if not isinstance(value, str):
            return None
        member = str.__new__(cls, value)
        member._name_ = value.upper()
        member._value_ = value
        return member

    @property
    def is_final(self) -> bool:
        """Whether the state is an end (as the server's *_is_final says)."""
        return self in _FINAL.get(type(self), frozenset())


class JobState(_State):
    """A job's state (docs/api.md, Job)."""

    QUEUED = "queued"
    STARTING = "starting"
    RUNNING = "running"
    SUCCEEDED = "succeeded"
    FAILED = "failed"
    KILLED = "killed"


class TaskState(_State):
    """A task's state, one instance of a role in one attempt (docs/api.md, Task)."""

    PENDING = "pending"
    STARTING = "starting"
    RUNNING = "running"
    SUCCEEDED = "succeeded"
    FAILED = "failed"
    KILLED = "killed"
    LOST = "lost"


class DagRunState(_State):
    """A DAG run's state, as Airflow names it."""

    QUEUED = "queued"
    RUNNING = "running"
    SUCCESS = "success"
    FAILED = "failed"


class TaskInstanceState(_State):
    """A task instance's state, as Airflow names it; NONE is the API's null."""

    NONE = "none"
    SCHEDULED = "scheduled"
    QUEUED = "queued"
    RUNNING = "running"
    SUCCESS = "success"
    FAILED = "failed"
    UP_FOR_RETRY = "up_for_retry"
    UPSTREAM_FAILED = "upstream_failed"
    SKIPPED = "skipped"
    REMOVED = "removed"
    UP_FOR_RESCHEDULE = "up_for_reschedule"


_FINAL: Dict[type, "frozenset[_State]"] = {
    JobState: frozenset({JobState.SUCCEEDED, JobState.FAILED, JobState.KILLED}),
    TaskState: frozenset({TaskState.SUCCEEDED, TaskState.FAILED, TaskState.KILLED,
                          TaskState.LOST}),
    DagRunState: frozenset({DagRunState.SUCCESS, DagRunState.FAILED}),
    TaskInstanceState: frozenset({TaskInstanceState.SUCCESS, TaskInstanceState.FAILED,
                                  TaskInstanceState.UPSTREAM_FAILED, TaskInstanceState.SKIPPED,
                                  TaskInstanceState.REMOVED}),
}

T = TypeVar("T", bound="_Answer")


@dataclasses.dataclass
class _Answer:
    """What every typed answer has: the keys it does not name, in `extra`."""

    @classmethod
    def from_json(cls: Type[T], obj: Mapping[str, Any]) -> T:
        """The answer from the API's JSON object; ValueError naming the key when one it
        needs is missing, or the object is not an object."""
        if not isinstance(obj, Mapping):
            raise ValueError("%s: expected a JSON object, got %s" % (cls.__name__,
                                                                     type(obj).__name__))
        known: Dict[str, Any] = {}
        extra: Dict[str, Any] = {}
        names = {f.name: f for f in dataclasses.fields(cls) if f.name != "extra"}
        for key, value in obj.items():
            if key in names:
                known[key] = cls._convert(key, value)
            else:
                extra[key] = value
        for f in names.values():
            if f.name not in known and f.default is dataclasses.MISSING and \
                    f.default_factory is dataclasses.MISSING:
                raise ValueError("%s: the API's object has no %r" % (cls.__name__, f.name))
        known["extra"] = extra
        return cls(**known)

    # the enum of the object's "state"
    _STATE: ClassVar[Type[_State]]

    @classmethod
    def _convert(cls, key: str, value: Any) -> Any:
        """The typed value of one known key: "state" as its enum, else the JSON value."""
        return cls._STATE(value) if key == "state" else value


@dataclasses.dataclass
class Task(_Answer):
    """One instance of a role in one attempt of a job (docs/api.md, Task)."""

    role: str
    index: int
    attempt: int = 0
    state: TaskState = TaskState.PENDING
    reason: str = ""
    host: str = ""
    port: int = 0
    pid: Optional[int] = None
    gpus: str = ""
    exit_code: Optional[int] = None
    signal: Optional[int] = None
    oom_killed: bool = False
    peak_memory_bytes: int = 0
    cpu_time_ms: int = 0
    started_at: Optional[str] = None
    ended_at: Optional[str] = None
    extra: Dict[str, Any] = dataclasses.field(default_factory=dict)
    _STATE: ClassVar[Type[_State]] = TaskState


@dataclasses.dataclass
class Job(_Answer):
    """A job (docs/api.md, Job).  `spec`, `version` and `tasks` come with one job's answer
    (GET /jobs/{id}); `roles` and `tasks_by_state` with the list's (GET /jobs)."""

    id: int
    name: str = ""
    state: JobState = JobState.QUEUED
    reason: str = ""
    framework: str = "none"
    priority: int = 0
    attempt: int = 0
    max_restarts: int = 0
    executor: str = "local"
    queue: Optional[str] = None
    exit_code: Optional[int] = None
    submitted_at: Optional[str] = None
    started_at: Optional[str] = None
    ended_at: Optional[str] = None
    spec: Optional[Dict[str, Any]] = None
    version: Optional[str] = None
    tasks: List[Task] = dataclasses.field(default_factory=list)
    roles: List[Dict[str, Any]] = dataclasses.field(default_factory=list)
    tasks_by_state: Dict[str, int] = dataclasses.field(default_factory=dict)
    extra: Dict[str, Any] = dataclasses.field(default_factory=dict)

    _STATE: ClassVar[Type[_State]] = JobState

    @classmethod
    def _convert(cls, key: str, value: Any) -> Any:
        if key == "tasks":
            return [Task.from_json(t) for t in value or []]
        return super()._convert(key, value)


@dataclasses.dataclass
class DagRun(_Answer):
    """A run of a DAG (Airflow's DAGRun)."""

    dag_id: str
    dag_run_id: str
    state: DagRunState = DagRunState.QUEUED
    logical_date: Optional[str] = None
    execution_date: Optional[str] = None
    start_date: Optional[str] = None
    end_date: Optional[str] = None
    data_interval_start: Optional[str] = None
    data_interval_end: Optional[str] = None
    run_type: str = ""
    conf: Dict[str, Any] = dataclasses.field(default_factory=dict)
    external_trigger: bool = False
    queued_at: Optional[str] = None
    last_scheduling_decision: Optional[str] = None
    note: Optional[str] = None
    reason: str = ""
    extra: Dict[str, Any] = dataclasses.field(default_factory=dict)
    _STATE: ClassVar[Type[_State]] = DagRunState


@dataclasses.dataclass
class TaskInstance(_Answer):
    """One task of one DAG run (Airflow's TaskInstance); `map_index` -1 for a plain task,
    0... for the instances of a `foreach` task; `job_id` the job of its current try."""

    dag_id: str
    dag_run_id: str
    task_id: str
    map_index: int = -1
    state: TaskInstanceState = TaskInstanceState.NONE
    try_number: int = 0
    max_tries: int = 0
    logical_date: Optional[str] = None
    execution_date: Optional[str] = None
    start_date: Optional[str] = None
    end_date: Optional[str] = None
    duration: Optional[float] = None
    job_id: Optional[int] = None
    pool: str = ""
    pool_slots: int = 1
    priority_weight: int = 0
    queued_when: Optional[str] = None
    reason: str = ""
    rendered_command: Optional[str] = None
    outputs: Optional[Dict[str, Any]] = None
    extra: Dict[str, Any] = dataclasses.field(default_factory=dict)

    _STATE: ClassVar[Type[_State]] = TaskInstanceState

    @classmethod
    def _convert(cls, key: str, value: Any) -> Any:
        if key == "state" and value is None:  # Airflow's null is the state "none"
            return TaskInstanceState.NONE
        return super()._convert(key, value)

    @property
    def key(self) -> str:
        """task_id, or task_id[i] for an instance of a mapped task (Client.task_states')."""
        return instance_key(self.task_id, self.map_index)


def instance_key(task_id: str, map_index: int) -> str:
    """How a task instance is named in a run: task_id, or task_id[i] for instance i of a
    mapped task."""
    return task_id if map_index < 0 else "%s[%d]" % (task_id, map_index)
