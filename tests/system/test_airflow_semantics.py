"""Airflow's run semantics on weir (docs/airflow.md, docs/dags.md): a task marked success or
failed clears its failed and upstream_failed downstream and the run goes on (Airflow's
set_task_instance_state); a try's exit status that skips its task or fails it without a retry
(skip_on_exit_code, no_retry_on_exit_code: what AirflowSkipException and AirflowFailException
become); branches, short circuits, XComs, task groups and Variables of Python DAG files."""

import json
import sys

from dagtest import Dags, dag_config
from test_airflow_dags import airflow_dags

MARK_YAML = """\
dag_id: mark_resume
schedule: none
tasks:
  - task_id: flaky
    command: test -e {side}/fixed
  - task_id: after
    depends_on: [flaky]
    command: echo after >> {side}/mark_after
  - task_id: last
    depends_on: [after]
    command: 'true'
  - task_id: cleanup
    depends_on: [flaky]
    trigger_rule: all_done
    command: 'true'
"""

EXIT_YAML = """\
dag_id: exits
schedule: none
tasks:
  - task_id: skips
    command: exit 99
    retries: 2
    retry_delay: 1
    skip_on_exit_code: 99
  - task_id: below_skip
    depends_on: [skips]
    command: 'true'
  - task_id: gives_up
    command: echo try >> {side}/gives_up; exit 98
    retries: 3
    retry_delay: 1
    skip_on_exit_code: [99]
    no_retry_on_exit_code: 98
  - task_id: retried
    command: echo try >> {side}/retried; exit 3
    retries: 1
    retry_delay: 1
    no_retry_on_exit_code: 98
"""


def server(make_server, tmp_path, env=None):
    srv = make_server(config=dag_config(), start=False)
    srv.extra_env["WEIR_AIRFLOW_PYTHON"] = sys.executable
    srv.extra_env.update(env or {})
    return Dags(srv, tmp_path)


def states(d, dag_id, run_id):
    return {k: v["state"] for k, v in d.tis(dag_id, run_id).items()}


def mark(d, dag_id, run_id, task_id, state):
    status, body = d.srv.api(
        "PATCH", "/api/v1/dags/%s/dagRuns/%s/taskInstances/%s" % (dag_id, run_id, task_id),
        {"new_state": state, "dry_run": False})
    assert status == 200, (status, body)
    return body


def test_marking_a_failed_task_success_lets_the_run_go_on(make_server, tmp_path):
    d = server(make_server, tmp_path)
    d.write("mark.yaml", MARK_YAML.format(side=d.side))
    d.srv.start()
    d.wait_dag("mark_resume")
    run = d.trigger("mark_resume")["dag_run_id"]
    assert d.wait_run("mark_resume", run)["state"] == "failed"
    assert states(d, "mark_resume", run) == {
        "flaky": "failed", "after": "upstream_failed", "last": "upstream_failed",
        "cleanup": "success"}
    # marked success: its failed downstream is cleared and runs; the run goes on to success
    mark(d, "mark_resume", run, "flaky", "success")
    assert d.wait_run("mark_resume", run)["state"] == "success", \
        states(d, "mark_resume", run)
    assert states(d, "mark_resume", run) == {
        "flaky": "success", "after": "success", "last": "success", "cleanup": "success"}
    assert d.side_lines("mark_after") == ["after"]
    # a mark with nothing failed below moves nothing: the run stays as it is (Airflow's)
    mark(d, "mark_resume", run, "after", "failed")
    assert d.run("mark_resume", run)["state"] == "success"
    assert states(d, "mark_resume", run)["after"] == "failed"
    # marked failed: the failed downstream is cleared too, and is upstream_failed again
    run2 = d.trigger("mark_resume")["dag_run_id"]
    assert d.wait_run("mark_resume", run2)["state"] == "failed"
    (d.side / "fixed").write_text("")
    mark(d, "mark_resume", run2, "flaky", "failed")
    assert d.wait_run("mark_resume", run2)["state"] == "failed"
    assert states(d, "mark_resume", run2) == {
        "flaky": "failed", "after": "upstream_failed", "last": "upstream_failed",
        "cleanup": "success"}
    # the mark on the single-TI route and on updateTaskInstancesState alike
    status, body = d.srv.api("POST", "/api/v1/dags/mark_resume/updateTaskInstancesState",
                             {"task_id": "flaky", "dag_run_id": run2, "new_state": "success",
                              "dry_run": False})
    assert status == 200, (status, body)
    assert d.wait_run("mark_resume", run2)["state"] == "success", \
        states(d, "mark_resume", run2)


def test_exit_statuses_skip_or_fail_without_retry(make_server, tmp_path):
    d = server(make_server, tmp_path)
    d.write("exits.yaml", EXIT_YAML.format(side=d.side))
    d.srv.start()
    d.wait_dag("exits")
    tasks = {t["task_id"]: t for t in d.get("/dags/exits/tasks")["tasks"]}
    assert tasks["skips"]["retries"] == 2
    run = d.trigger("exits")["dag_run_id"]
    assert d.wait_run("exits", run)["state"] == "failed"
    tis = d.tis("exits", run)
    assert tis["skips"]["state"] == "skipped" and tis["skips"]["try_number"] == 1, tis
    assert tis["below_skip"]["state"] == "skipped", tis
    assert tis["gives_up"]["state"] == "failed" and tis["gives_up"]["try_number"] == 1, tis
    assert d.side_lines("gives_up") == ["try"]
    assert tis["retried"]["state"] == "failed" and tis["retried"]["try_number"] == 2, tis
    assert d.side_lines("retried") == ["try", "try"]


def test_bad_exit_code_lists_are_refused(make_server, tmp_path):
    d = server(make_server, tmp_path)
    d.write("bad.yaml", "dag_id: bad_exits\ntasks:\n  - task_id: t\n    command: 'true'\n"
            "    skip_on_exit_code: [0]\n")
    d.srv.start()
    from conftest import wait_for
    errs = wait_for(lambda: d.get("/importErrors")["import_errors"], 30, "an import error")
    assert "skip_on_exit_code" in errs[0]["stack_trace"], errs


def test_branches_short_circuits_skips_and_failures(make_server, tmp_path):
    d = airflow_dags(make_server, tmp_path, ["branching.py"])
    d.wait_dag("branching")
    errs = d.get("/importErrors")["import_errors"]
    assert not errs, errs
    run = d.trigger("branching")["dag_run_id"]
    # failer failed, and the leaf below it is all_done: Airflow's rule gives success
    d.wait_run("branching", run)
    got = states(d, "branching", run)
    assert got == {
        # BranchPythonOperator: the path not chosen and its own downstream are skipped; the
        # join under none_failed_min_one_success runs
        "choose": "success", "small": "success", "large": "skipped",
        "after_large": "skipped", "join": "success",
        # @task.branch
        "route": "success", "fast": "success", "slow": "skipped",
        # ShortCircuitOperator: everything below is skipped, all_done included
        "gate": "success", "gated": "skipped", "gated_all_done": "skipped",
        # ignore_downstream_trigger_rules=False: only the direct downstream
        "soft_gate": "success", "soft_below": "skipped", "soft_all_done": "success",
        # AirflowSkipException, AirflowFailException, a Bash exit 99
        "skipper": "skipped", "below_skipper": "skipped", "failer": "failed",
        "cleanup": "success", "bash_skip": "skipped", "below_bash_skip": "skipped",
        # one_done: a failure counts as done; a skip does not
        "one_done": "success", "one_done_none": "skipped",
        # a triggered run is the latest
        "latest": "success", "after_latest": "success",
        # a custom operator, its value read downstream through .output
        "custom": "success", "read_custom": "success",
    }, got
    tis = d.tis("branching", run)
    # the skip and the failure used one try each, their retries unused
    assert tis["skipper"]["try_number"] == 1 and tis["failer"]["try_number"] == 1, tis
    assert tis["bash_skip"]["try_number"] == 1, tis
    assert d.side_lines("skipper") == ["ran"] and d.side_lines("failer") == ["ran"]
    assert d.side_lines("small") == ["ran"] and d.side_lines("large") == []
    assert d.side_lines("fast") == ["fast"] and d.side_lines("slow") == []
    assert d.side_lines("custom_3") == ["ran"] and d.side_lines("read_custom_3") == ["ran"]
    base = "/dags/branching/dagRuns/%s/taskInstances" % run
    x = d.get(base + "/choose/xcomEntries/return_value?stringify=false")
    assert x["value"] == "small", x
    x = d.get(base + "/custom/xcomEntries/return_value?stringify=false")
    assert x["value"]["label"] == "3", x
    log = d.log("branching", run, "failer")
    assert "the input is corrupt" in log, log

    # the other way through the branch, and the gate open
    run = d.trigger("branching", conf={"rows": 50, "go_on": True})["dag_run_id"]
    d.wait_run("branching", run)
    got = states(d, "branching", run)
    assert (got["small"], got["large"], got["after_large"], got["join"]) == \
        ("skipped", "success", "success", "success"), got
    assert (got["gated"], got["gated_all_done"]) == ("success", "success"), got


def test_dags_are_paused_at_creation(make_server, tmp_path):
    srv = make_server(config=dag_config() + "dags_are_paused_at_creation: true\n", start=False)
    d = Dags(srv, tmp_path)
    d.write("one.yaml", "dag_id: born_paused\ntasks:\n  - task_id: t\n    command: 'true'\n")
    srv.start()
    assert d.wait_dag("born_paused")["is_paused"] is True
    # unpaused by hand, it stays so when its file changes
    status, body = srv.api("PATCH", "/api/v1/dags/born_paused", {"is_paused": False})
    assert status == 200 and body["is_paused"] is False, (status, body)
    d.write("one.yaml", "dag_id: born_paused\ndescription: again\ntasks:\n"
            "  - task_id: t\n    command: 'true'\n")
    dag = d.wait_dag("born_paused", pred=lambda b: b.get("description") == "again")
    assert dag["is_paused"] is False, dag
    # weir's default: unpaused
    d2 = server(make_server, tmp_path)
    d2.write("two.yaml", "dag_id: born_free\ntasks:\n  - task_id: t\n    command: 'true'\n")
    d2.srv.start()
    assert d2.wait_dag("born_free")["is_paused"] is False


def test_xcoms_from_any_task_and_variables(make_server, tmp_path):
    config = dag_config() + "variables:\n  region: eu-west-1\n  limits: {rows: 100}\n" \
        "  unrelated: never-seen\n"
    srv = make_server(config=config, start=False)
    srv.extra_env["WEIR_AIRFLOW_PYTHON"] = sys.executable
    d = Dags(srv, tmp_path)
    (d.dir / "xcoms.py").write_text(d.text("airflow/xcoms.py"))
    srv.start()
    d.wait_dag("xcoms")
    errs = d.get("/importErrors")["import_errors"]
    assert not errs, errs
    tasks = {t["task_id"]: t for t in d.get("/dags/xcoms/tasks")["tasks"]}
    assert set(tasks) == {"first", "second", "quiet", "parts", "spread", "collect",
                          "read_vars", "when"}
    run = d.trigger("xcoms")["dag_run_id"]
    assert d.wait_run("xcoms", run)["state"] == "success", states(d, "xcoms", run)
    got = json.loads((d.side / "xcom_collect").read_text())
    assert got == {"both": [{"n": 2}, "a"], "one": "a", "key": 7, "far": 8,
                   "missing": "dflt", "none_pushed": ["a"], "parts_key": 1}, got
    assert json.loads((d.side / "xcom_spread").read_text()) == [1, 9]
    got = json.loads((d.side / "xcom_vars").read_text())
    assert got == {"region": "eu-west-1", "limits": {"rows": 100}, "absent": "fallback",
                   "templ": "eu-west-1", "given": ["limits", "region"],
                   "error": "'Variable also_not_set does not exist'"}, got
    # multiple_outputs: each key is an XCom of its own, through the REST API too
    base = "/dags/xcoms/dagRuns/%s/taskInstances" % run
    x = d.get(base + "/parts/xcomEntries/high?stringify=false")
    assert x["value"] == 9, x
    # a pickled value reads as its repr through the REST API
    x = d.get(base + "/when/xcomEntries/return_value?stringify=false")
    assert x["value"] == "datetime.datetime(2024, 5, 6, 7, 8)", x


def test_task_groups_run_under_airflows_ids(make_server, tmp_path):
    d = airflow_dags(make_server, tmp_path, ["groups.py"])
    d.wait_dag("groups")
    errs = d.get("/importErrors")["import_errors"]
    assert not errs, errs
    tasks = {t["task_id"]: t for t in d.get("/dags/groups/tasks")["tasks"]}
    assert set(tasks) == {"pick", "extract.rows", "extract.double", "archive.copy",
                          "archive.verify", "report.write", "join", "after1", "after2"}
    # the branch chose the group "extract": its root runs, the other group is skipped
    assert sorted(tasks["pick"]["downstream_task_ids"]) == ["archive.copy", "extract.rows"]
    run = d.trigger("groups")["dag_run_id"]
    assert d.wait_run("groups", run)["state"] == "success", states(d, "groups", run)
    assert states(d, "groups", run) == {
        "pick": "success", "extract.rows": "success", "extract.double": "success",
        "archive.copy": "skipped", "archive.verify": "skipped", "report.write": "success",
        "join": "success", "after1": "success", "after2": "success"}
    assert d.side_lines("groups_report") == ["6 3"]
    x = d.get("/dags/groups/dagRuns/%s/taskInstances/extract.double/xcomEntries/return_value"
              "?stringify=false" % run)
    assert x["value"] == 6, x


def test_setup_and_teardown(make_server, tmp_path):
    d = airflow_dags(make_server, tmp_path, ["setup_teardown.py"])
    d.wait_dag("setup_teardown")
    errs = d.get("/importErrors")["import_errors"]
    assert not errs, errs
    tasks = {t["task_id"]: t for t in d.get("/dags/setup_teardown/tasks")["tasks"]}
    assert tasks["delete_cluster"]["trigger_rule"] == "all_done_setup_success", tasks
    # the teardown failed, but a teardown's failure does not fail the run
    run = d.trigger("setup_teardown")["dag_run_id"]
    assert d.wait_run("setup_teardown", run)["state"] == "success", \
        states(d, "setup_teardown", run)
    assert states(d, "setup_teardown", run) == {
        "create_cluster": "success", "work": "success", "delete_cluster": "failed",
        "mkdir": "success", "use": "success", "rmdir": "success"}
    # the work fails: the teardown still runs (its setup succeeded); the run fails on the work
    run = d.trigger("setup_teardown", conf={"work_fails": True})["dag_run_id"]
    assert d.wait_run("setup_teardown", run)["state"] == "failed"
    got = states(d, "setup_teardown", run)
    assert (got["work"], got["delete_cluster"]) == ("failed", "failed"), got
    assert d.side_lines("st_delete") == ["ran", "ran"]
