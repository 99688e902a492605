"""trigger_dag tasks on a real server: a run of another DAG with its conf templated, through the
path of the API's trigger (a conf the other DAG's params refuse fails the task with the words of
the 400 the API would answer); without wait_for_completion the task succeeds at once, with it
the task runs, holding no job, until the other run ends and takes its outcome (allowed_states
and failed_states decide)."""

import json

from conftest import wait_for
from dagtest import make_dags  # noqa: F401

CHILD = """\
dag_id: child
params:
  size: {type: integer, minimum: 1, default: 1}
  label: none
  outcome: ok
  gate: ""
tasks:
  - task_id: work
    command: |
      if [ -n "$WEIR_PARAM_gate" ]; then while [ ! -e "$WEIR_PARAM_gate" ]; do sleep 0.1; done; fi
      echo "size=$WEIR_PARAM_size label=$WEIR_PARAM_label run=$WEIR_RUN_ID" >> @SIDE@/child
      test "$WEIR_PARAM_outcome" = ok
"""

PARENT = """\
dag_id: parent
params: {tag: nightly, outcome: ok, gate: ""}
tasks:
  - task_id: kick
    trigger_dag:
      dag_id: child
      conf: {size: 3, label: "{{ params.tag }}-{{ ds_nodash }}", outcome: "{{ params.outcome }}",
             gate: "{{ params.gate }}"}
      run_id: "from_{{ run_id }}"
      wait_for_completion: true
      poke_interval: 5
  - task_id: after
    depends_on: [kick]
    command: echo "{{ outputs.kick.run_id }}" >> @SIDE@/after
"""

FIRE_AND_FORGET = """\
dag_id: fire
tasks:
  - task_id: kick
    trigger_dag: {dag_id: child, conf: {label: forgot}}
"""

INVERTED = """\
dag_id: inverted
tasks:
  - task_id: expect_failure
    trigger_dag:
      dag_id: child
      conf: {outcome: bad}
      wait_for_completion: true
      allowed_states: [failed]
"""

BAD_CONF = """\
dag_id: badconf
tasks:
  - task_id: kick
    trigger_dag: {dag_id: child, conf: {size: 0}, wait_for_completion: true}
  - task_id: never
    depends_on: [kick]
    command: "true"
"""

NO_DAG = """\
dag_id: nodag
tasks:
  - task_id: kick
    trigger_dag: {dag_id: not_there}
"""


def start_dags(make_dags, *files):
    d = make_dags()
    for name, text in (("child.yaml", CHILD),) + files:
        d.write(name, text.replace("@SIDE@", str(d.side)))
    d.wait_dag("child")
    for name, _ in files:
        d.wait_dag(name.split(".")[0])
    return d


def test_wait_for_completion_success_with_templated_conf(make_dags):
    d = start_dags(make_dags, ("parent.yaml", PARENT))
    tasks = {t["task_id"]: t for t in d.get("/dags/parent/tasks")["tasks"]}
    assert tasks["kick"]["class_ref"]["class_name"] == "TriggerDagRunOperator", tasks["kick"]
    assert tasks["kick"]["trigger_dag_id"] == "child" and tasks["kick"]["kind"] == "trigger_dag"
    gate = d.side / "gate"
    run = d.trigger("parent", run_id="p1", conf={"gate": str(gate)},
                    logical_date="2024-03-05T06:00:00+00:00")
    child = wait_for(lambda: (lambda r: r if r["total_entries"] else None)(
        d.get("/dags/child/dagRuns")), 60, "the child's run")["dag_runs"][0]
    assert child["dag_run_id"] == "from_p1" and child["run_type"] == "manual", child
    assert child["conf"] == {"size": 3, "label": "nightly-20240305", "outcome": "ok",
                             "gate": str(gate)}, child
    # the child waits at its gate: the parent's task runs, with no job behind it
    kick = wait_for(lambda: (lambda t: t if t["state"] == "running" else None)(
        d.tis("parent", "p1")["kick"]), 30, "kick running")
    assert kick["job_id"] is None and kick["hostname"] == "", kick
    assert kick["rendered_command"] == "trigger_dag child run from_p1", kick
    assert d.run("parent", "p1")["state"] == "running"
    gate.write_text("go")
    d.wait_run("child", "from_p1")
    run = d.wait_run("parent", run["dag_run_id"])
    assert run["state"] == "success", (run, d.tis("parent", "p1"))
    assert d.side_lines("child") == ["size=3 label=nightly-20240305 run=from_p1"]
    # the trigger's output: the run it started, for the tasks after it
    assert d.side_lines("after") == ["from_p1"]
    log = d.log("parent", "p1", "kick")
    assert "started run from_p1 of DAG child" in log, log


def test_wait_for_completion_failure_and_allowed_states(make_dags):
    d = start_dags(make_dags, ("parent.yaml", PARENT), ("inverted.yaml", INVERTED))
    d.trigger("parent", run_id="p2", conf={"outcome": "bad"})
    run = d.wait_run("parent", "p2")
    assert run["state"] == "failed", run
    kick = d.tis("parent", "p2")["kick"]
    assert kick["state"] == "failed", kick
    assert d.run("child", "from_p2")["state"] == "failed"
    assert d.tis("parent", "p2")["after"]["state"] == "upstream_failed"
    # the reason says which run ended how
    assert "run from_p2 of DAG child ended failed" in kick["reason"], kick
    # allowed_states: [failed]: the child's failure is the task's success
    d.trigger("inverted", run_id="i1")
    assert d.wait_run("inverted", "i1")["state"] == "success"


def test_without_waiting_and_refusals(make_dags):
    d = start_dags(make_dags, ("fire.yaml", FIRE_AND_FORGET), ("badconf.yaml", BAD_CONF),
              ("nodag.yaml", NO_DAG))
    # fire and forget: the task succeeds at once, whatever the child does
    d.trigger("fire", run_id="f1")
    assert d.wait_run("fire", "f1")["state"] == "success"
    child = d.get("/dags/child/dagRuns")["dag_runs"]
    assert len(child) == 1 and child[0]["conf"] == {"label": "forgot"}, child
    d.wait_run("child", child[0]["dag_run_id"])

    # a conf the child's params refuse: the API's 400 ...
    status, body = d.srv.api("POST", "/api/v1/dags/child/dagRuns", {"conf": {"size": 0}})
    assert status == 400, body
    words = body["detail"]
    assert "params.size" in words, body
    # ... and the same words fail the task, with no run of the child made
    d.trigger("badconf", run_id="b1")
    assert d.wait_run("badconf", "b1")["state"] == "failed"
    tis = d.tis("badconf", "b1")
    assert tis["kick"]["state"] == "failed" and tis["never"]["state"] == "upstream_failed"
    assert words in tis["kick"]["reason"], (words, tis["kick"])
    assert len(d.get("/dags/child/dagRuns")["dag_runs"]) == 1
    # a DAG that is not there
    d.trigger("nodag", run_id="n1")
    assert d.wait_run("nodag", "n1")["state"] == "failed"
    assert "DAG not_there: no such DAG" in d.tis("nodag", "n1")["kick"]["reason"]


def test_bad_trigger_dag_files_are_import_errors(make_dags):
    d = make_dags()
    d.write("bad.yaml", "dag_id: bad\ntasks:\n  - task_id: k\n"
                        "    trigger_dag: {dag_id: c, allowed_states: [queued]}\n")

    def error():
        errs = d.get("/importErrors")["import_errors"]
        return [e for e in errs if e["filename"].endswith("bad.yaml")]
    errs = wait_for(error, 30, "an import error for bad.yaml")
    assert "bad.yaml:4: tasks[0].trigger_dag.allowed_states[0]: expected success or failed" \
        in errs[0]["stack_trace"], errs


def test_a_waiting_trigger_survives_a_restart(make_dags):
    d = start_dags(make_dags, ("parent.yaml", PARENT))
    gate = d.side / "gate-restart"
    d.trigger("parent", run_id="p3", conf={"gate": str(gate)})
    wait_for(lambda: d.tis("parent", "p3")["kick"]["state"] == "running", 30, "kick running")
    wait_for(lambda: d.tis("child", "from_p3")["work"]["state"] == "running", 30,
             "the child's task running")
    # the server goes down hard while the parent waits; the child's task finishes meanwhile
    d.srv.kill9()
    gate.write_text("go")
    d.srv.start()
    assert d.wait_run("child", "from_p3")["state"] == "success"
    run = d.wait_run("parent", "p3")
    assert run["state"] == "success", (run, d.tis("parent", "p3"))
    assert d.side_lines("after") == ["from_p3"]
