"""weir.types' dataclasses from the API's JSON: the keys the server's views write are typed
fields (read from src/api/*_views.c, so that a new key there fails here until it is typed or
meant for `extra`), unknown keys land in `extra`, a missing needed key is named."""

import dataclasses

import pytest

import cside
from weir.types import (DagRun, DagRunState, Job, JobState, Task, TaskInstance,
                        TaskInstanceState, TaskState)

TASK = {"role": "worker", "index": 1, "attempt": 2, "state": "failed", "reason": "OOMKilled",
        "host": "127.0.0.1", "port": 40411, "pid": 4242, "gpus": "0,1", "exit_code": 137,
        "signal": None, "oom_killed": True, "peak_memory_bytes": 123456789,
        "cpu_time_ms": 5310, "started_at": "2026-11-30T12:00:01.000Z",
        "ended_at": "2026-11-30T12:00:09.000Z"}

JOB = {"id": 12, "name": "imdb", "state": "failed", "reason": "worker:1 exited 137",
       "framework": "pytorch", "priority": 0, "attempt": 2, "max_restarts": 2,
       "exit_code": 137, "submitted_at": "2026-11-30T12:00:00.123Z",
       "started_at": "2026-11-30T12:00:01.000Z", "ended_at": "2026-11-30T12:00:09.000Z",
       "executor": "local", "queue": None, "spec": {"name": "imdb"},
       "version": "9f1c2b7a5e3d0c41", "tasks": [TASK]}

RUN = {"dag_id": "etl", "dag_run_id": "manual__1", "logical_date": "2026-11-30T12:00:00+00:00",
       "execution_date": "2026-11-30T12:00:00+00:00", "start_date": None, "end_date": None,
       "data_interval_start": None, "data_interval_end": None, "state": "queued",
       "run_type": "manual", "conf": {"n": 3}, "external_trigger": True,
       "queued_at": "2026-11-30T12:00:00+00:00", "last_scheduling_decision": None,
       "note": None, "reason": ""}

TI = {"task_id": "load", "dag_id": "etl", "dag_run_id": "manual__1", "map_index": 2,
      "execution_date": None, "logical_date": None, "start_date": None, "end_date": None,
      "duration": None, "state": None, "try_number": 0, "max_tries": 1,
      "pool": "default_pool", "pool_slots": 1, "priority_weight": 1, "operator": "weir",
      "queued_when": None, "hostname": "", "unixname": "", "job_id": None,
      "rendered_command": None, "reason": "", "outputs": None, "sla_miss": None}


def fields(cls):
    return {f.name for f in dataclasses.fields(cls)} - {"extra"}


def test_every_key_of_the_servers_views_is_a_typed_field():
    task_keys = cside.written_keys("src/api/job_views.c", "static int write_task(")
    job_keys = cside.written_keys("src/api/job_views.c", "int job_view_job_write(")
    run_keys = cside.written_keys("src/api/dag_views.c", "int dag_view_run_write(")
    ti_keys = cside.written_keys("src/api/dag_views.c", "static json_t *ti_tree(",
                                 r'put\(&b, "(\w+)"')
    assert "exit_code" in task_keys and "tasks" in job_keys and "conf" in run_keys
    assert set(task_keys) == fields(Task)
    # version: the answer's digest; roles and tasks_by_state: the list's view
    assert set(job_keys) == fields(Job) - {"version", "roles", "tasks_by_state"}
    assert set(run_keys) == fields(DagRun)
    # a task instance has many of Airflow's fields weir fills with constants: those stay
    # in extra; every typed one is a key the server writes
    assert fields(TaskInstance) <= set(ti_keys), fields(TaskInstance) - set(ti_keys)


def test_a_job_with_its_tasks():
    job = Job.from_json(JOB)
    assert job.id == 12 and job.state is JobState.FAILED and job.state.is_final
    assert job.spec == {"name": "imdb"} and job.version == "9f1c2b7a5e3d0c41"
    assert job.queue is None and job.extra == {}
    (task,) = job.tasks
    assert isinstance(task, Task) and task.state is TaskState.FAILED
    assert (task.role, task.index, task.exit_code, task.oom_killed) == ("worker", 1, 137, True)
    assert task.signal is None and task.pid == 4242


def test_a_jobs_list_entry_has_roles_and_no_tasks():
    brief = {k: v for k, v in JOB.items() if k not in ("spec", "version", "tasks")}
    brief.update(state="running", roles=[{"name": "worker", "instances": 2, "vcores": 1,
                                          "memory_mb": 2048, "gpus": 0}],
                 tasks_by_state={"running": 2})
    job = Job.from_json(brief)
    assert job.state is JobState.RUNNING and not job.state.is_final
    assert job.tasks == [] and job.spec is None and job.version is None
    assert job.tasks_by_state == {"running": 2} and job.roles[0]["memory_mb"] == 2048


def test_unknown_keys_are_kept_in_extra_and_unknown_states_read():
    job = Job.from_json(dict(JOB, state="paused", gpu_seconds=12.5,
                             tasks=[dict(TASK, state="evicted", node="n3")]))
    assert job.extra == {"gpu_seconds": 12.5}
    assert job.state.value == "paused" and isinstance(job.state, JobState)
    assert job.tasks[0].extra == {"node": "n3"} and job.tasks[0].state == "evicted"


def test_a_missing_needed_key_is_named():
    with pytest.raises(ValueError, match="'id'"):
        Job.from_json({"name": "x", "state": "queued"})
    with pytest.raises(ValueError, match="'dag_run_id'"):
        DagRun.from_json({"dag_id": "etl"})
    with pytest.raises(ValueError, match="JSON object"):
        Task.from_json(["worker", 0])


def test_a_dag_run():
    run = DagRun.from_json(RUN)
    assert run.state is DagRunState.QUEUED and run.conf == {"n": 3} and run.external_trigger
    assert run.extra == {}


def test_a_task_instance_null_state_is_none_and_airflows_constants_go_to_extra():
    ti = TaskInstance.from_json(TI)
    assert ti.state is TaskInstanceState.NONE and not ti.state.is_final
    assert ti.key == "load[2]" and ti.job_id is None
    assert ti.extra == {"operator": "weir", "hostname": "", "unixname": "", "sla_miss": None}
    done = TaskInstance.from_json(dict(TI, map_index=-1, state="upstream_failed", job_id=7))
    assert done.state is TaskInstanceState.UPSTREAM_FAILED and done.state.is_final
    assert done.key == "load" and done.job_id == 7
