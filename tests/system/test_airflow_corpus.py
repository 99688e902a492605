"""A corpus of Airflow DAG files written the way Airflow's own tutorials and example DAGs are
(tests/system/dags/airflow/corpus/: our own files, each exercising the constructs of one
example that needs no provider and no network).  Every file loads (`weir dags check`), every
DAG runs through one real server (triggered over REST, all at once) and ends with each task
instance in the state Airflow gives it, with the XCom values Airflow's would have; a few run
through `weir dags test` too (docs/airflow.md, "The corpus")."""

import re
import shutil
import sys

from airflow_schemas import check
from conftest import cli_describe, wait_for
from dagtest import DAGS_SRC, Dags, dag_config
from test_airflow_dags import weir_cli

CORPUS = DAGS_SRC / "airflow" / "corpus"
S, K, F = "success", "skipped", "failed"

# dag_id -> (conf, the run's state, {task: state}; a task not named is success)
EXPECT = {
    "corpus_tut_classic": (None, S, {}),
    "corpus_tut_taskflow": (None, S, {}),
    "corpus_tut_pipeline": (None, S, {}),
    "corpus_bash_ops": (None, S, {"skips": K, "below_skip": K}),
    "corpus_python_ops": (None, S, {}),
    "corpus_branch_classic": (None, S, {
        "path_a": K, "after_path_a": K, "path_c": K, "after_path_c": K, "many_2": K}),
    "corpus_short_circuit": (None, S, {"no_1": K, "no_2": K, "gated_a": K, "gated_b": K}),
    "corpus_xcom_ways": (None, S, {}),
    "corpus_groups": (None, S, {}),
    "corpus_setup_teardown": ({"fail": True}, F, {"use_room": F}),
    "corpus_latest_only": (None, S, {}),
    "corpus_skips": (None, S, {"skip_all": K, "join_all": K, "last_all": K, "skip_one": K}),
    "corpus_trigger_controller": (None, S, {}),
    "corpus_params_ui": ({"tone": "loud", "times": 2}, S, {}),
    "corpus_nested_branch": (None, S, {
        "right": K, "inner": K, "inner_one": K, "inner_two": K, "inner_join": K}),
    "corpus_complex": (None, S, {}),
    "corpus_sensors": (None, S, {"py_soft": K, "time_not_yet": K, "bash_never": K,
                                 "not_today": K}),
    "corpus_day_of_week": (None, S, {"no_day": K}),
    "corpus_passing_params": ({"extra": "e"}, S, {}),
    "corpus_sla_dag": (None, S, {}),
    "corpus_ds_producer": (None, S, {}),
    "corpus_taskflow_more": (None, S, {"out_window": K}),
    "corpus_python_more": (None, S, {}),
    "corpus_xcom_classic": (None, S, {}),
    "corpus_standard_paths": (None, S, {"other": K}),
    "corpus_state_names": (None, S, {}),
    "corpus_audit_more": (None, S, {"passed": K}),
    "corpus_audit_branch": (None, F, {"wrong_way": F, "below": "upstream_failed"}),
    "corpus_params_form": ({"level": 4, "at": "08:09:10", "numbers": [3, 4.5],
                            "people": [{"name": "bo"}]}, S, {}),
}

# the DAGs the test triggers its own way
OTHERS = ["corpus_trigger_target", "corpus_ext_parent", "corpus_ext_child", "corpus_ds_consumer",
          "corpus_branch_minute", "corpus_state_callee"]

# dag_id -> {task: its return_value XCom}
XCOMS = {
    "corpus_tut_taskflow": {"store": "32.00/3", "sum_up": {"total": 32.0, "count": 3}},
    "corpus_tut_pipeline": {"report": 7.5},
    "corpus_python_ops": {"decorated": 42, "nap_1": 0.5},
    "corpus_branch_classic": {"pick": "path_b", "pick_many": ["many_1", "many_3"]},
    "corpus_xcom_ways": {"pull_both": {"keyed": [3, 4, 5], "both": [{"k": "v"}, "last line"]},
                         "pulled_in_bash": "4", "plus": 8, "doubled": 16,
                         "echo_last": "last line"},
    "corpus_groups": {"calc.second": 6, "calc__1.second": 9, "total": 15},
    "corpus_setup_teardown": {"inner.job": "lease-1:done", "use_pool_b": "ab"},
    "corpus_taskflow_more": {"me": "corpus_taskflow_more/me", "shout": "hello you all from corpus",
                             "scaled_small": 10, "scaled_big": 200},
    "corpus_params_ui": {"greet": ["HELLO ANN", "HELLO BO"] * 2, "templated": "loud/2"},
    "corpus_passing_params": {"show_params": "3/red/e"},
    "corpus_sensors": {"counted": 42},
    "corpus_params_form": {"read_conf": {
        "conf": {"level": 4, "at": "08:09:10", "numbers": [3, 4.5], "people": [{"name": "bo"}]},
        "level": 4, "fixed": "always", "colour": "green", "ratio": 70}},
    "corpus_state_names": {"names": ["success", "skipped", True, True]},
    "corpus_standard_paths": {"chosen": "yes", "pick": "chosen"},
    "corpus_xcom_classic": {"compare": "compared", "shell_push": "returned last",
                            "from_bash": ["returned last", "set by hand"]},
    "corpus_python_more": {"run_made": "from-a-task", "run_kept": "pushed-by-template",
                           "external": [42, 3], "decorated_elsewhere": 42, "quiet": True,
                           "venv": [2, 3]},
    "corpus_nested_branch": {"outer": "left"},
    "corpus_audit_more": {"native": ["int", "list", [3, 6]], "total": 33, "total_shifted": 312,
                          "plus_one": 6, "choose": "chosen",
                          "from_env": ["teal", {"days": [1, 2]}, "dflt", "db.example", 6543],
                          "after_all": "last"},
}


def xcom(d, dag_id, run_id, task_id):
    return d.get("/dags/%s/dagRuns/%s/taskInstances/%s/xcomEntries/return_value"
                 "?stringify=false" % (dag_id, run_id, task_id))["value"]


def states(d, dag_id, run_id):
    return {k: v["state"] for k, v in d.tis(dag_id, run_id).items()}


def test_the_corpus_loads(tmp_path):
    r = weir_cli(tmp_path, "dags", "check", CORPUS, timeout=180)
    assert r.returncode == 0, cli_describe(r)
    files = sorted(p.name for p in CORPUS.glob("*.py"))
    for name in files:
        assert "%s/%s: DAG " % (CORPUS, name) in r.stdout, (name, r.stdout)
    assert r.stdout.endswith("%d files, %d DAGs, 0 import errors\n" % (
        len(files), len(EXPECT) + len(OTHERS))), r.stdout


def test_the_corpus_runs_as_airflow_runs_it(make_server, tmp_path):
    srv = make_server(config=dag_config(), start=False)
    srv.extra_env["WEIR_AIRFLOW_PYTHON"] = sys.executable
    srv.extra_env["WEIR_AIRFLOW_VENV_CACHE"] = str(tmp_path / "venvs")  # the virtualenv task's
    # an Airflow deployment's variables and connection, under Airflow's names
    srv.extra_env["AIRFLOW_VAR_AUDIT_COLOUR"] = "teal"
    srv.extra_env["AIRFLOW_VAR_AUDIT_CFG"] = '{"days": [1, 2]}'
    srv.extra_env["AIRFLOW_CONN_AUDIT_DB"] = "postgres://u:pw@db.example:6543/orders"
    d = Dags(srv, tmp_path)
    shutil.copytree(CORPUS, d.dir, dirs_exist_ok=True)
    srv.start()
    for dag_id in list(EXPECT) + OTHERS:
        d.wait_dag(dag_id, timeout=120)
        status, _ = srv.api("PATCH", "/api/v1/dags/%s" % dag_id, {"is_paused": False})
        assert status == 200, dag_id

    # all at once; then each run's end, its task instances and its values
    runs = {dag_id: d.trigger(dag_id, conf=conf)["dag_run_id"]
            for dag_id, (conf, _, _) in EXPECT.items()}
    for dag_id, (conf, want_run, want) in EXPECT.items():
        run_id = runs[dag_id]
        run = d.wait_run(dag_id, run_id, timeout=120)
        check("DAGRun", run)
        got = states(d, dag_id, run_id)
        expected = {task: want.get(task, S) for task in got}
        assert (run["state"], got) == (want_run, expected), dag_id
        for task, value in XCOMS.get(dag_id, {}).items():
            assert xcom(d, dag_id, run_id, task) == value, (dag_id, task)
        check("TaskInstanceCollection",
              d.get("/dags/%s/dagRuns/%s/taskInstances" % (dag_id, run_id)))

    # values read from the context and the templates
    run_id = runs["corpus_bash_ops"]
    assert re.fullmatch(r"key=corpus_bash_ops__key__\d{8}",
                        xcom(d, "corpus_bash_ops", run_id, "key")), run_id
    run_id = runs["corpus_python_ops"]
    ds = d.run("corpus_python_ops", run_id)["logical_date"][:10]
    assert xcom(d, "corpus_python_ops", run_id, "show_context") == "ds was " + ds[:4]
    assert xcom(d, "corpus_python_ops", run_id, "rendered") == ds.replace("-", "")
    run_id = runs["corpus_python_more"]
    ds = d.run("corpus_python_more", run_id)["logical_date"][:10]
    assert xcom(d, "corpus_python_more", run_id, "query_of") == \
        "select count(*) from orders where day = '%s'" % ds
    log = d.log("corpus_passing_params", runs["corpus_passing_params"], "echo_params")
    assert "size 3 colour red own mine" in log and "env red" in log, log
    task = d.get("/dags/corpus_tut_pipeline/tasks/read_rows")
    assert task["doc_md"] == "#### Read\nPuts the rows in an XCom.\n", task
    log = d.log("corpus_tut_classic", runs["corpus_tut_classic"], "looped")
    assert "step 2 ok" in log, log

    # the second audit: doc_md naming a .md file beside the DAG (a template rendered
    # without a context, as Airflow's get_doc_md), a group's default_args without its prefix,
    # each callback of a list
    doc = d.get("/dags/corpus_audit_more/details")["doc_md"]
    assert doc == "### Nightly totals\n\n- sums the orders\n- sums the refunds\n", doc
    assert d.get("/dags/corpus_audit_more/tasks/inner")["retries"] == 2
    log = d.log("corpus_audit_more", runs["corpus_audit_more"], "total")
    assert "first callback: total ok, log at http://localhost:8080/#/dags/corpus_audit_more" \
        "?tab=graph&run=%s&task_id=total&map_index=-1" % runs["corpus_audit_more"].replace(
            ":", "%3A").replace("+", "%2B") in log, log
    assert "second callback: total ok" in log, log
    log = d.log("corpus_audit_branch", runs["corpus_audit_branch"], "wrong_way")
    assert "failure callback: wrong_way, branch task wrong_way chose elsewhere, not among " \
        "its direct downstream tasks (below)" in log and "first callback" not in log, log

    # the `with` blocks put their tasks between their setup and teardown
    tasks = {t["task_id"]: t for t in d.get("/dags/corpus_setup_teardown/tasks")["tasks"]}
    assert sorted(tasks["use_pool_a"]["downstream_task_ids"]) == ["use_pool_b"], tasks
    assert sorted(tasks["open_pool"]["downstream_task_ids"]) == ["close_pool", "use_pool_a"]
    assert sorted(tasks["use_pool_b"]["downstream_task_ids"]) == ["close_pool"]
    assert sorted(tasks["warm"]["downstream_task_ids"]) == ["cool", "while_warm"]
    assert sorted(tasks["while_warm"]["downstream_task_ids"]) == ["cool"]

    # the form's schema checks a trigger's conf (items, properties, const, format time);
    # without a conf the task skips itself
    for conf, what in [({"people": [{"age": 3}]}, "expected an object with name"),
                       ({"numbers": ["x"]}, "item 0: expected a number"),
                       ({"fixed": "other"}, "(const)"), ({"at": "25:00:00"}, "a time")]:
        status, body = srv.api("POST", "/api/v1/dags/corpus_params_form/dagRuns", {"conf": conf})
        assert status == 400 and what in body["detail"], (conf, status, body)
    for conf, what in [({"tags": []}, "tags: expected a list of at least 1 items"),
                       ({"tags": ["a", "a"]}, "expected a list of unique items"),
                       ({"step": 12}, "step: expected a multiple of 5")]:
        status, body = srv.api("POST", "/api/v1/dags/corpus_audit_more/dagRuns", {"conf": conf})
        assert status == 400 and what in body["detail"], (conf, status, body)
    run_id = d.trigger("corpus_params_form")["dag_run_id"]
    assert d.wait_run("corpus_params_form", run_id)["state"] == S
    assert states(d, "corpus_params_form", run_id) == {"read_conf": K}

    # the teardown ran after the failed work; a run without the failure succeeds
    run_id = d.trigger("corpus_setup_teardown")["dag_run_id"]
    assert d.wait_run("corpus_setup_teardown", run_id)["state"] == S
    assert set(states(d, "corpus_setup_teardown", run_id).values()) == {S}

    # the controller's run of its target, with its conf
    target = wait_for(lambda: d.get("/dags/corpus_trigger_target/dagRuns")["dag_runs"], 60,
                      "a run of corpus_trigger_target")[0]
    assert target["conf"] == {"note": "from the controller"}, target
    run_id = target["dag_run_id"]
    assert d.wait_run("corpus_trigger_target", run_id)["state"] == S
    assert xcom(d, "corpus_trigger_target", run_id, "read_conf") == "from the controller"
    assert "note: from the controller" in d.log("corpus_trigger_target", run_id, "echo_conf")

    # the trigger that waited: its callee's run, manual
    callee = d.get("/dags/corpus_state_callee/dagRuns")["dag_runs"]
    assert [r["state"] for r in callee] == [S], callee
    assert xcom(d, "corpus_state_callee", callee[0]["dag_run_id"], "kind") == ["manual", True]
    tasks = {t["task_id"]: t for t in d.get("/dags/corpus_state_names/tasks")["tasks"]}
    assert sorted(tasks["a"]["downstream_task_ids"]) == ["c", "d"], tasks["a"]
    assert sorted(tasks["call"]["downstream_task_ids"]) == ["a", "b"], tasks["call"]

    # the producer's Dataset started its consumer
    consumer = wait_for(lambda: d.get("/dags/corpus_ds_consumer/dagRuns")["dag_runs"], 60,
                        "a run of corpus_ds_consumer")[0]
    assert d.wait_run("corpus_ds_consumer", consumer["dag_run_id"])["state"] == S

    # a branch on the logical date's minute, depends_on_past across a skipped task; the
    # priority weights added up by their rules
    odd = d.trigger("corpus_branch_minute", logical_date="2024-05-06T10:03:00+00:00")
    assert d.wait_run("corpus_branch_minute", odd["dag_run_id"])["state"] == S
    got = states(d, "corpus_branch_minute", odd["dag_run_id"])
    assert (got["odd_minute"], got["even_minute"]) == (S, K), got
    even = d.trigger("corpus_branch_minute", logical_date="2024-05-06T10:04:00+00:00")
    assert d.wait_run("corpus_branch_minute", even["dag_run_id"])["state"] == S
    got = states(d, "corpus_branch_minute", even["dag_run_id"])
    assert (got["odd_minute"], got["even_minute"]) == (K, S), got
    weights = {t["task_id"]: t["priority_weight"]
               for t in d.get("/dags/corpus_branch_minute/tasks")["tasks"]}
    assert weights == {"which": 3, "even_minute": 1, "odd_minute": 1, "weighted_last": 5,
                       "weighted_absolute": 2, "weighted_downstream": 7,
                       "weighted_upstream": 2}, weights

    # the child waits on the parent's marker of the same logical date
    day = "2024-05-06T00:00:00+00:00"
    parent = d.trigger("corpus_ext_parent", logical_date=day)["dag_run_id"]
    assert d.wait_run("corpus_ext_parent", parent)["state"] == S
    child = d.trigger("corpus_ext_child", logical_date=day)["dag_run_id"]
    assert d.wait_run("corpus_ext_child", child)["state"] == S
    assert states(d, "corpus_ext_child", child) == {"waits": S, "waited_on": S}


def test_dags_test_runs_corpus_files(tmp_path):
    for name, dag_id, want in [
            ("tut_taskflow.py", "corpus_tut_taskflow", {"pull": S, "sum_up": S, "store": S}),
            ("nested_branch.py", "corpus_nested_branch", {"outer_join": S, "inner_join": K}),
            ("skips.py", "corpus_skips", {"join_all": K, "join_one": S})]:
        r = weir_cli(tmp_path, "dags", "test", CORPUS / name, timeout=120)
        assert r.returncode == 0, cli_describe(r)
        assert "weir dags test: DAG %s" % dag_id in r.stdout, r.stdout
        assert re.search(r"dag run \S+ of %s success" % dag_id, r.stdout), r.stdout
        table = {}
        for line in r.stdout.splitlines():
            cells = line.split()
            if len(cells) == 5 and cells[1] == "-":
                table[cells[0]] = cells[2]
        for task, state in want.items():
            assert table.get(task) == state, (name, task, r.stdout)
