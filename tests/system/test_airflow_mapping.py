"""Dynamic task mapping, callbacks and the rest of a task's context in Python DAG files
(docs/airflow.md): `.partial().expand()` over literals, an upstream's XCom, several
upstreams' XComs and a mapped task's,
expand_kwargs, zip, map, map_index_template, a reducer over all mapped outputs, an empty
expansion skipped."""

import json
import sys
from pathlib import Path

from dagtest import Dags, dag_config
from conftest import wait_for
from test_airflow_dags import wait_import_error
from test_dags_test import describe, tasks_test, tester  # noqa: F401 (a fixture)


def server(make_server, tmp_path):
    srv = make_server(config=dag_config(), start=False)
    srv.extra_env["WEIR_AIRFLOW_PYTHON"] = sys.executable
    return Dags(srv, tmp_path)


def xcom(d, dag_id, run, task_id, map_index=None, key="return_value"):
    path = "/dags/%s/dagRuns/%s/taskInstances/%s/xcomEntries/%s?stringify=false" % (
        dag_id, run, task_id, key)
    if map_index is not None:
        path += "&map_index=%d" % map_index
    return d.get(path)["value"]


def run_ok(d, dag_id, run):
    """Waits for the run; its failed tasks' logs in the message when it did not succeed."""
    state = d.wait_run(dag_id, run)["state"]
    if state != "success":
        tis = d.tis(dag_id, run)
        logs = [d.log(dag_id, run, ti["task_id"] + ("" if ti["map_index"] < 0 else
                                                    "/logs/%d?map_index=%d" % (
                                                        ti["try_number"], ti["map_index"])),
                      ti["try_number"]) if ti["map_index"] < 0 else
                str(d.get("/dags/%s/dagRuns/%s/taskInstances/%s/%d" % (
                    dag_id, run, ti["task_id"], ti["map_index"])))
                for ti in tis.values() if ti["state"] == "failed"]
        raise AssertionError("run %s: %s\n%s\n%s" % (
            run, state, {k: v["state"] for k, v in tis.items()}, "\n".join(logs)))


def mapped_values(d, dag_id, run, task_id):
    """The values of a mapped task's instances, in map-index order."""
    tis = d.get("/dags/%s/dagRuns/%s/taskInstances/%s/listMapped" % (dag_id, run, task_id))
    idx = sorted(ti["map_index"] for ti in tis["task_instances"])
    return [xcom(d, dag_id, run, task_id, i) for i in idx]


def test_mapping(make_server, tmp_path):
    d = server(make_server, tmp_path)
    d.write("mapping.py", d.text("airflow/mapping.py"))
    d.srv.start()
    d.wait_dag("mapping")
    run = d.trigger("mapping")["dag_run_id"]
    run_ok(d, "mapping", run)
    tis = d.tis("mapping", run)
    # over an upstream's list, with a fixed argument; the reducer gets every value in order
    assert mapped_values(d, "mapping", run, "add") == [11, 12, 13]
    assert json.loads((d.side / "total").read_text()) == [11, 12, 13]
    assert xcom(d, "mapping", run, "total") == 36
    # literal lists: their cross product, the last argument varying fastest
    assert mapped_values(d, "mapping", run, "crossed") == [11, 21, 12, 22]
    assert mapped_values(d, "mapping", run, "kwargs") == [3, 7]
    assert mapped_values(d, "mapping", run, "zipped") == [2, 4, 6]
    assert mapped_values(d, "mapping", run, "classic") == [3, 6]
    assert mapped_values(d, "mapping", run, "echo") == ["a", "b"]
    # an empty expansion: the task is skipped
    assert tis["empty"]["state"] == "skipped"
    # map indexes and the rendered map_index_template
    assert [tis["add[%d]" % i]["map_index"] for i in range(3)] == [0, 1, 2]
    assert [tis["add[%d]" % i]["rendered_map_index"] for i in range(3)] == \
        ["x=1", "x=2", "x=3"]
    one = d.get("/dags/mapping/dagRuns/%s/taskInstances/echo/1" % run)
    assert one["rendered_map_index"] == "echo b"
    assert tis["crossed[0]"]["rendered_map_index"] == "x=1"
    tasks = {t["task_id"]: t for t in d.get("/dags/mapping/tasks")["tasks"]}
    assert tasks["echo"]["class_ref"]["class_name"] == "Shout"


def side_json(d, name):
    return [json.loads(line) for line in d.side_lines(name)]


def test_callbacks(make_server, tmp_path):
    d = server(make_server, tmp_path)
    d.write("callbacks.py", d.text("airflow/callbacks.py"))
    d.srv.start()
    d.wait_dag("callbacks")
    run = d.trigger("callbacks")["dag_run_id"]
    assert d.wait_run("callbacks", run, timeout=120)["state"] == "failed"
    got = sorted(map(tuple, side_json(d, "callbacks")))
    assert got == sorted([
        ("execute", "fine", 1, None), ("success", "fine", 1, None),
        ("success_too", "fine", 1, None),
        ("retry", "breaks", 1, "boom"), ("failure", "breaks", 2, "boom"),
        ("failure", "slow", 1, "Task received SIGTERM signal")]), got
    # the DAG's on_failure_callback, once the run ended (the notifier runs it)
    wait_for(lambda: side_json(d, "dag_callbacks"), 60, "the DAG's callback")
    [(dag_id, reason, run_id, ds)] = side_json(d, "dag_callbacks")
    assert (dag_id, reason, run_id) == ("callbacks", "task_failure", run)
    assert ds == d.run("callbacks", run)["logical_date"][:10]
    notes = d.get("/dags/callbacks/dagRuns/%s/notifications" % run)
    assert [(n["event"], n["target_kind"]) for n in notes["notifications"]] == \
        [("run_failure", "command")], notes


def test_prev_success_and_conn_in_the_context(make_server, tmp_path):
    d = server(make_server, tmp_path)
    d.write("callbacks.py", d.text("airflow/callbacks.py"))
    d.srv.start()
    status, body = d.srv.api("POST", "/api/v1/connections", {
        "connection_id": "warehouse", "conn_type": "postgres", "host": "db.example",
        "login": "etl", "password": "pw", "port": 5432})
    assert status == 200, (status, body)
    d.wait_dag("context_extra")
    first = d.trigger("context_extra")["dag_run_id"]
    run_ok(d, "context_extra", first)
    second = d.trigger("context_extra")["dag_run_id"]
    run_ok(d, "context_extra", second)
    one, two = side_json(d, "context")
    # the first run has no earlier success
    assert one["prev_execution_date_success"] is None and one["prev_start_date_success"] is None
    # the second gets the first's dates
    prev = d.run("context_extra", first)
    assert two["prev_execution_date_success"].replace(" ", "T") == prev["logical_date"]
    assert two["prev_start_date_success"].replace(" ", "T") == prev["start_date"]
    assert two["prev_end_date_success"].replace(" ", "T") == prev["end_date"]
    assert two["prev_data_interval_start_success"].replace(" ", "T") == \
        prev["data_interval_start"]
    assert two["prev_data_interval_end_success"].replace(" ", "T") == prev["data_interval_end"]
    # conn: the connections the task lists, AirflowNotFoundException for the others
    assert two["host"] == "db.example"
    assert "The conn_id `other` isn't defined" in two["other"]
    assert two["test_mode"] is False
    # the DAG's on_success_callback, after each run
    wait_for(lambda: len(side_json(d, "dag_callbacks")) == 2, 60, "the DAG's callbacks")
    assert sorted(r[2] for r in side_json(d, "dag_callbacks")) == sorted([first, second])
    assert {r[1] for r in side_json(d, "dag_callbacks")} == {"success"}


def test_test_mode_under_weir_tasks_test(tester):
    text = (Path(__file__).parent / "dags" / "airflow" / "callbacks.py").read_text()
    path = tester.write("callbacks.py", text.replace("@SIDE@", str(tester.side)))
    r = tasks_test(tester, "context_test", "show", "2024-03-01", "--dags", Path(path).parent)
    assert r.returncode == 0, describe(r)
    got = [json.loads(line) for line in (tester.side / "context").read_text().splitlines()]
    assert got[-1]["test_mode"] is True, got


def test_mapping_over_several_and_mapped_tasks(make_server, tmp_path):
    d = server(make_server, tmp_path)
    d.write("mapping_more.py", d.text("airflow/mapping_more.py"))
    d.srv.start()
    d.wait_dag("mapping_more")
    run = d.trigger("mapping_more")["dag_run_id"]
    run_ok(d, "mapping_more", run)
    tis = d.tis("mapping_more", run)
    # expand(l=letters(), n=nums()): the cross product, the last argument fastest
    assert mapped_values(d, "mapping_more", run, "combine") == \
        ["a1", "a2", "a3", "b1", "b2", "b3"]
    tagged = mapped_values(d, "mapping_more", run, "tag")
    assert len(tagged) == 12
    assert tagged[:4] == ["a-10-100", "a-10-200", "a-10-300", "a-20-100"]
    assert tagged[-1] == "b-20-300"
    # a mapped task's values, one instance each, and a reducer over them
    assert mapped_values(d, "mapping_more", run, "plus_one") == [3, 5, 7]
    assert xcom(d, "mapping_more", run, "total") == 15
    assert mapped_values(d, "mapping_more", run, "times_ten") == [10, 30]
    assert tis["never"]["state"] == "skipped"


def test_mapping_refusals(make_server, tmp_path):
    d = server(make_server, tmp_path)
    d.write("zip_across.py", '''
from datetime import datetime
from airflow import DAG
from airflow.decorators import task

with DAG("zip_across", schedule=None, start_date=datetime(2024, 1, 1)):
    @task
    def a():
        return [1]

    @task
    def add(p):
        return p

    add.expand(p=a().zip(a()))
''')
    d.srv.start()
    err = wait_import_error(d, "zip_across.py")["stack_trace"]
    assert "zip_across.py:" in err and "a zip across tasks" in err, err


def test_mapped_task_group(make_server, tmp_path):
    d = server(make_server, tmp_path)
    d.write("mapping_groups.py", d.text("airflow/mapping_groups.py"))
    d.srv.start()
    d.wait_dag("mapping_groups")
    run = d.trigger("mapping_groups")["dag_run_id"]
    run_ok(d, "mapping_groups", run)
    tis = d.tis("mapping_groups", run)
    # each task of the group has an instance per item, with the group's argument, the
    # partial()'s, and the XCom of the group's task at the same map index
    assert mapped_values(d, "mapping_groups", run, "per_city.report") == \
        ["oslo:4c", "lima:4c", "rome:4c"]
    assert [tis["per_city.fetch[%d]" % i]["map_index"] for i in range(3)] == [0, 1, 2]
    # downstream of the group: every instance's value
    assert xcom(d, "mapping_groups", run, "summary") == ["lima:4c", "oslo:4c", "rome:4c"]
    assert mapped_values(d, "mapping_groups", run, "literal.square") == [1, 4, 9, 16]
    assert tis["never.square"]["state"] == "skipped"
