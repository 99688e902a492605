"""Conformance of the Airflow API that DAG files use (tests/system/dags/airflow/conformance/:
our own files, each written the way Airflow 2 users write them): the context's values for a
run of a known date and conf, every trigger rule below three mixes of upstream states, how
tasks end (skip codes, failures, retries, AirflowFailException), XComs, template files, and
a DAG file of the Airflow 1.10 era on the old import paths Airflow 2 still imports, a `@dag`
function's parameters as the DAG's params. Each runs
through one real server (triggered over REST) and some through `weir dags test`; the states
and values are those Airflow 2 gives (docs/airflow.md, "The corpus")."""

import re
import shutil
import sys

from conftest import cli_describe
from dagtest import DAGS_SRC, Dags, dag_config
from test_airflow_dags import weir_cli

CONF = DAGS_SRC / "airflow" / "conformance"
S, K, F, U = "success", "skipped", "failed", "upstream_failed"

# Airflow 2's TriggerRuleDep: {rule: (below success+failed+skipped, below skipped+skipped,
# below failed+upstream_failed)}
RULES = {
    "all_success": (U, K, U),
    "all_failed": (K, K, S),
    "all_done": (S, S, S),
    "one_success": (S, K, U),
    "one_failed": (S, K, S),
    "one_done": (S, K, S),
    "none_failed": (U, S, U),
    "none_failed_min_one_success": (U, K, U),
    "none_skipped": (K, K, S),
    "all_skipped": (K, S, K),
    "always": (S, S, S),
}


def rule_states():
    want = {"ok": S, "bad": F, "skip_a": K, "skip_b": K, "never": U, "skip_late": K}
    for rule, states in RULES.items():
        for group, state in zip(("mixed", "skips", "fails"), states):
            want["%s.%s" % (group, rule)] = state
    return want


BEHAVIOUR = {"skip99": K, "skip3": K, "skip_old": K, "fails": F, "after_skip": K, "after_fail": U,
             "no_retry": F}
OLD_PATHS = {"never": K}

# dag_id -> (logical date, conf, the run's state, {task: state}; a task not named succeeds)
RUNS = {
    "conf_context": ("2024-05-06T00:00:00+00:00", {"size": 9}, S, {}),
    "conf_trigger_rules": (None, None, F, rule_states()),
    "conf_behaviour": ("2024-05-06T00:00:00+00:00", None, F, BEHAVIOUR),
    "conf_old_paths": (None, None, S, OLD_PATHS),
    "conf_dag_params": (None, {"value": 7}, S, {}),
}


def xcom(d, dag_id, run_id, task_id, key="return_value"):
    return d.get("/dags/%s/dagRuns/%s/taskInstances/%s/xcomEntries/%s?stringify=false"
                 % (dag_id, run_id, task_id, key))["value"]


def test_the_conformance_files_load(tmp_path):
    r = weir_cli(tmp_path, "dags", "check", CONF, timeout=120)
    assert r.returncode == 0, cli_describe(r)
    assert r.stdout.endswith("5 files, 5 DAGs, 0 import errors\n"), r.stdout


def test_the_conformance_dags_run_as_airflow_runs_them(make_server, tmp_path):
    srv = make_server(config=dag_config(), start=False)
    srv.extra_env["WEIR_AIRFLOW_PYTHON"] = sys.executable
    d = Dags(srv, tmp_path)
    shutil.copytree(CONF, d.dir, dirs_exist_ok=True)
    srv.start()
    runs = {}
    for dag_id, (day, conf, _, _) in RUNS.items():
        d.wait_dag(dag_id, timeout=120)
        runs[dag_id] = d.trigger(dag_id, conf=conf, logical_date=day)["dag_run_id"]
    for dag_id, (_, _, want_run, want) in RUNS.items():
        run = d.wait_run(dag_id, runs[dag_id], timeout=120)
        got = {k: v["state"] for k, v in d.tis(dag_id, runs[dag_id]).items()}
        assert (run["state"], got) == (want_run, {t: want.get(t, S) for t in got}), dag_id

    # the context (the callable compares each value with Airflow's; the templates here)
    run_id = runs["conf_context"]
    assert run_id == "manual__2024-05-06T00:00:00+00:00"
    assert xcom(d, "conf_context", run_id, "rendered") == [
        "20240506/9", "CONF_CONTEXT! abab",
        {"prev": "2024-05-06", "key": "conf_context__rendered__20240506",
         "interval": "2024-05-05", "conf": "9 dflt",
         "macro": "2024-05-05 20240506T000000+0000"}]
    assert xcom(d, "conf_context", run_id, "shell") == \
        "manual__2024-05-06T00:00:00+00:00 1 red 2024-05-06"

    # how the tasks ended, and their values
    run_id, dag_id = runs["conf_behaviour"], "conf_behaviour"
    tis = d.tis(dag_id, run_id)
    assert (tis["flaky"]["try_number"], tis["no_retry"]["try_number"]) == (2, 1), tis
    assert "callback saw failed of no_retry, max_tries 3, try 1, AirflowFailException" in \
        d.log(dag_id, run_id, "no_retry")
    assert xcom(d, dag_id, run_id, "flaky") == 2
    assert xcom(d, dag_id, run_id, "last_line") == "second"
    assert xcom(d, dag_id, run_id, "in_cwd") == "/"
    assert xcom(d, dag_id, run_id, "env_added") == "5:home"
    assert re.fullmatch(r"report for 2024-05-06 of conf_behaviour in \S+",
                        xcom(d, dag_id, run_id, "from_file"))
    assert xcom(d, dag_id, run_id, "posted") == {"day": "2024-05-06", "dag": dag_id, "n": 5}
    assert (xcom(d, dag_id, run_id, "split", "left"),
            xcom(d, dag_id, run_id, "split", "right")) == (1, [2, 3])
    assert xcom(d, dag_id, run_id, "gather") == [1, [2, 3], ["second", "/"], 5]
    assert "datetime.datetime(2024, 5, 6, 7, 8)" in xcom(d, dag_id, run_id, "when")
    keys = {e["key"] for e in d.get("/dags/%s/dagRuns/%s/taskInstances/quiet/xcomEntries"
                                    % (dag_id, run_id))["xcom_entries"]}
    assert "return_value" not in keys, keys

    # `email` on the failed task: a mail over smtp_default (the server has none: it fails,
    # recorded; the 1.10-era file's default_args turn both mails off)
    notes = d.get("/dags/%s/dagRuns/%s/notifications" % (dag_id, run_id))["notifications"]
    assert [(n["task_id"], n["event"], n["target_kind"]) for n in notes] == [
        ("fails", "task_failure", "email")], notes
    assert not d.get("/dags/conf_old_paths/dagRuns/%s/notifications"
                     % runs["conf_old_paths"])["notifications"]

    # a @dag function's parameters: the DAG's params, the conf over the default
    assert xcom(d, "conf_dag_params", runs["conf_dag_params"], "show") == [7, "hi", 7, "hi"]

    # the 1.10-era file: its custom operator's self.log reaches the task's log
    run_id = runs["conf_old_paths"]
    assert xcom(d, "conf_old_paths", run_id, "greet") == "hello conf_old_paths"
    log = d.log("conf_old_paths", run_id, "greet")
    assert re.search(r"\{old_paths\.py:\d+\} INFO - greeting conf_old_paths", log), log
    assert "post_execute saw 'hello conf_old_paths'" in log, log
    assert xcom(d, "conf_old_paths", run_id, "greet", "who") == "conf_old_paths"


def dags_test_table(stdout):
    table = {}
    for line in stdout.splitlines():
        cells = line.split()
        if len(cells) in (3, 5) and cells[1] == "-":
            table[cells[0]] = cells[2]
    return table


def test_dags_test_gives_the_same_states(tmp_path):
    for name, dag_id, end, want in [("trigger_rules.py", "conf_trigger_rules", F, rule_states()),
                                    ("old_paths.py", "conf_old_paths", S, OLD_PATHS)]:
        r = weir_cli(tmp_path, "dags", "test", CONF / name, timeout=120)
        assert r.returncode == (0 if end == S else 1), cli_describe(r)
        assert re.search(r"dag run \S+ of %s %s" % (dag_id, end), r.stdout), r.stdout
        table = dags_test_table(r.stdout)
        assert table == {t: want.get(t, S) for t in table} and len(table) == len(
            set(table) | set(want)), (name, r.stdout)
