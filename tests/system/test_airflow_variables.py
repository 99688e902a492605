"""Variable.set, .update and .delete in a Python DAG file's task: the server writes them when
the try succeeds, only for the keys the DAG file names, and keeps the values out of the
task's XComs (docs/airflow.md, docs/security.md)."""

import json
import sys

from dagtest import Dags, dag_config
from test_airflow_mapping import xcom


def test_variable_set_from_a_task(make_server, tmp_path):
    srv = make_server(config=dag_config(), start=False)
    srv.extra_env["WEIR_AIRFLOW_PYTHON"] = sys.executable
    d = Dags(srv, tmp_path)
    d.write("variables_set.py", d.text("airflow/variables_set.py"))
    d.srv.start()
    status, body = d.srv.api("POST", "/api/v1/variables", {"key": "old", "value": "x"})
    assert status == 200, body
    d.wait_dag("variables_set")
    run = d.trigger("variables_set")["dag_run_id"]
    assert d.wait_run("variables_set", run)["state"] == "failed"
    tis = d.tis("variables_set", run)
    assert tis["write"]["state"] == "success" and tis["read"]["state"] == "success", tis
    # the task below reads what the task above wrote
    assert xcom(d, "variables_set", run, "read") == ["42", {"a": 1}, "gone"]
    assert d.get("/variables/counter")["value"] == "42"
    assert json.loads(d.get("/variables/config")["value"]) == {"a": 1}
    status, _ = d.srv.api("GET", "/api/v1/variables/old")
    assert status == 404
    # a key the file does not name: the try fails, nothing written
    sneaky = d.get("/dags/variables_set/dagRuns/%s/taskInstances/sneaky" % run)
    assert sneaky["state"] == "failed"
    assert "Variable.set(not_named)" in sneaky["reason"], sneaky["reason"]
    status, _ = d.srv.api("GET", "/api/v1/variables/not_named")
    assert status == 404
    # the values are no XCom of the task
    keys = [e["key"] for e in d.get("/dags/variables_set/dagRuns/%s/taskInstances/write/"
                                    "xcomEntries" % run)["xcom_entries"]]
    assert "weir_set_variables" not in keys, keys
    assert "weir_set_variables" not in json.dumps(
        d.get("/dags/variables_set/dagRuns/%s/taskInstances/write" % run))
