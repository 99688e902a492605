"""weir.types' states against the server's: each enum's members and values are states.c's
table (names and order), and is_final is states.c's *_is_final."""

import pytest

import cside
from weir.client import JOB_FINAL, RUN_FINAL
from weir.types import DagRunState, JobState, TaskInstanceState, TaskState

# table in states.c, its enumerators' prefix in states.h, the enum here, the C function
# that says which are final
TABLES = [
    ("job", "JOB_", JobState, "job_state_is_final"),
    ("task", "TASK_", TaskState, "task_state_is_final"),
    ("run", "DAG_RUN_", DagRunState, "dag_run_state_is_final"),
    ("ti", "DAG_TI_", TaskInstanceState, "dag_ti_state_is_final"),
]


@pytest.mark.parametrize("table,prefix,enum,_", TABLES, ids=[t[0] for t in TABLES])
def test_each_state_is_the_servers_name_in_its_order(table, prefix, enum, _):
    c_names = cside.name_tables()[table]
    assert c_names, "no %s_names table in src/model/states.c" % table
    expected = [(ident[len(prefix):], name) for ident, name in c_names.items()]
    assert [(m.name, m.value) for m in enum] == expected


@pytest.mark.parametrize("table,prefix,enum,function", TABLES, ids=[t[0] for t in TABLES])
def test_the_final_states_are_the_servers(table, prefix, enum, function):
    c_names = cside.name_tables()[table]
    c_final = {c_names[ident] for ident in cside.final_states(function)}
    assert c_final, function
    assert {m.value for m in enum if m.is_final} == c_final


def test_the_clients_final_tuples_are_the_enums():
    assert JOB_FINAL == ("succeeded", "failed", "killed")
    assert RUN_FINAL == ("success", "failed")


def test_a_state_is_its_name_as_a_str():
    assert JobState.RUNNING == "running" and isinstance(JobState.RUNNING, str)
    assert str(TaskInstanceState.UP_FOR_RETRY) == "up_for_retry"
    assert "%s" % DagRunState.SUCCESS == "success"
    assert JobState("killed") is JobState.KILLED


def test_a_newer_servers_state_still_reads():
    s = JobState("paused")
    assert isinstance(s, JobState) and s.value == "paused" and s == "paused"
    assert s.name == "PAUSED" and not s.is_final
    assert s not in list(JobState)
    with pytest.raises(ValueError):
        JobState(3)
