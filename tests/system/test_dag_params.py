"""Params with a schema: a default that breaks it is an import error naming the param; a
trigger whose conf breaks it is refused (400, problem+json on Airflow's route; the CLI's exit
status and message) and nothing is stored; a conf that passes runs.  The schema is shown in
Airflow's DAG details and in weir's DAG JSON.  And the trigger rules none_failed_min_one_success
and all_skipped, each on a real run."""

import json

from conftest import cli_describe, wait_for
from dagtest import make_dags  # noqa: F401

CHECKED = """\
dag_id: checked
params:
  side: "@SIDE@"
  n: {type: integer, default: 3, minimum: 1, maximum: 5, description: how many}
  model: {type: string, enum: [als, bpr]}
  day: {type: string, format: date, default: "2024-01-31"}
  tag: {type: string, pattern: "^[a-z]+$", default: nightly}
tasks:
  - task_id: say
    command: echo "n={{ params.n }} model={{ params.model }} tag={{ params.tag }}" \
      > {{ params.side }}/said
"""

BAD_DEFAULT = """\
dag_id: bad_default
params:
  n: {type: integer, default: 0, minimum: 1}
tasks:
  - {task_id: a, command: "true"}
"""


def runs_of(d, dag_id):
    return d.get("/dags/%s/dagRuns" % dag_id)["total_entries"]


def test_params_checked_on_load_trigger_and_cli(make_dags):
    d = make_dags()
    d.write("checked.yaml", CHECKED.replace("@SIDE@", str(d.side)))
    d.write("bad_default.yaml", BAD_DEFAULT)
    d.wait_dag("checked")

    # the bad default: an import error that names the param and what was expected
    def error():
        errs = d.get("/importErrors")["import_errors"]
        return [e for e in errs if e["filename"].endswith("bad_default.yaml")]
    errs = wait_for(error, 30, "an import error for bad_default.yaml")
    assert "params.n: default: expected a number >= 1, got 0" in errs[0]["stack_trace"], errs

    # Airflow's details: each param with its value, description and schema
    det = d.get("/dags/checked/details")["params"]
    assert det["n"] == {"__class": "airflow.models.param.Param", "value": 3,
                        "description": "how many",
                        "schema": {"type": "integer", "minimum": 1, "maximum": 5}}, det
    assert det["model"]["value"] is None and det["model"]["schema"]["enum"] == ["als", "bpr"]
    assert det["side"]["schema"] == {"type": "string"}, det
    # weir's DAG JSON: plain defaults, and the schemas beside them
    dag = d.get("/dags/checked")
    assert dag["params"]["n"] == 3 and dag["params"]["model"] is None, dag
    assert dag["param_schemas"]["tag"]["pattern"] == "^[a-z]+$", dag
    assert "side" not in dag["param_schemas"], dag

    # a conf that breaks the schema: 400 problem+json naming the param; nothing stored
    cases = [
        ({"model": "svd"}, 'params.model: expected one of "als", "bpr", got "svd"'),
        ({}, "params.model: expected a value (the param is required), got nothing"),
        ({"model": "als", "n": 9}, "params.n: expected a number <= 5, got 9"),
        ({"model": "als", "n": "2"}, 'params.n: expected an integer, got "2"'),
        ({"model": "als", "day": "2024-02-30"},
         'params.day: expected a date (YYYY-MM-DD), got "2024-02-30"'),
        ({"model": "als", "tag": "Night-ly"},
         'params.tag: expected a string matching ^[a-z]+$, got "Night-ly"'),
    ]
    for conf, msg in cases:
        status, hdrs, data = d.srv.request("POST", "/api/v1/dags/checked/dagRuns",
                                           {"conf": conf, "dag_run_id": "refused"})
        assert status == 400, (conf, status, data)
        assert hdrs.get("Content-Type", "").startswith("application/problem+json"), hdrs
        problem = json.loads(data)
        assert problem["status"] == 400 and problem["detail"] == msg, (conf, problem)
    assert runs_of(d, "checked") == 0

    # the CLI: a conf the server refuses is bad input, exit 2, with its message; nothing stored
    r = d.srv.cli("dags", "trigger", "checked", "--conf", '{"model": "als", "n": 0}')
    assert r.returncode == 2, cli_describe(r)
    assert "params.n: expected a number >= 1, got 0" in r.stderr, cli_describe(r)
    assert runs_of(d, "checked") == 0

    # a conf that passes runs, with its values
    r = d.srv.cli("dags", "trigger", "checked", "--run-id", "ok_1", "--conf",
                  '{"model": "bpr", "n": 5}', "--wait", timeout=90)
    assert r.returncode == 0, cli_describe(r)
    assert d.side_lines("said") == ["n=5 model=bpr tag=nightly"]
    run = d.trigger("checked", conf={"model": "als"}, run_id="ok_2")
    assert d.wait_run("checked", run["dag_run_id"])["state"] == "success"
    assert d.side_lines("said") == ["n=3 model=als tag=nightly"]
    assert runs_of(d, "checked") == 2


RULES = """\
dag_id: rules
params:
  side: "@SIDE@"
tasks:
  - {task_id: ok, command: "true"}
  - {task_id: boom, command: "exit 3"}
  # all_failed after a success: skipped, the way a branch not taken is
  - {task_id: skip_me, command: "true", depends_on: [ok], trigger_rule: all_failed}
  - task_id: join_ok
    depends_on: [ok, skip_me]
    trigger_rule: none_failed_min_one_success
    command: echo join_ok >> {{ params.side }}/ran
  - task_id: join_failed
    depends_on: [ok, boom]
    trigger_rule: none_failed_min_one_success
    command: echo join_failed >> {{ params.side }}/ran
  - task_id: join_none
    depends_on: [skip_me]
    trigger_rule: none_failed_min_one_success
    command: echo join_none >> {{ params.side }}/ran
  - task_id: all_skipped_yes
    depends_on: [skip_me]
    trigger_rule: all_skipped
    command: echo all_skipped_yes >> {{ params.side }}/ran
  - task_id: all_skipped_no
    depends_on: [ok, skip_me]
    trigger_rule: all_skipped
    command: echo all_skipped_no >> {{ params.side }}/ran
"""


def run_rules(make_dags):
    """The rules DAG run once: (Dags, {task: state})."""
    d = make_dags()
    d.write("rules.yaml", RULES.replace("@SIDE@", str(d.side)))
    d.wait_dag("rules")
    run = d.trigger("rules", run_id="r1")
    assert d.wait_run("rules", run["dag_run_id"])["state"] == "failed"  # boom failed
    state = {k: v["state"] for k, v in d.tis("rules", "r1").items()}
    assert state["skip_me"] == "skipped", state
    return d, state


def test_none_failed_min_one_success(make_dags):
    d, state = run_rules(make_dags)
    # a success and a skip: runs; a failure: upstream_failed; only skips: skipped
    assert state["join_ok"] == "success", state
    assert state["join_failed"] == "upstream_failed", state
    assert state["join_none"] == "skipped", state
    assert "join_ok" in d.side_lines("ran")
    assert "join_failed" not in d.side_lines("ran") and "join_none" not in d.side_lines("ran")


def test_all_skipped(make_dags):
    d, state = run_rules(make_dags)
    # every upstream skipped: runs; one that succeeded: skipped
    assert state["all_skipped_yes"] == "success", state
    assert state["all_skipped_no"] == "skipped", state
    assert "all_skipped_yes" in d.side_lines("ran")
    assert "all_skipped_no" not in d.side_lines("ran")
