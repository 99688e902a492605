"""The DAG folder while the server runs: an edited file is picked up, a broken file is an
import error (API and `weir dags list`) and the other DAGs keep running."""

from conftest import cli_describe, wait_for
from dagtest import make_dags  # noqa: F401


def test_edited_dag_file_is_picked_up(make_dags):
    d = make_dags()
    d.write("edited.yaml", d.text("edited.yaml", VERSION=1))
    d.wait_dag("edited", pred=lambda dag: dag.get("description") == "version 1")
    run = d.trigger("edited")
    assert d.wait_run("edited", run["dag_run_id"])["state"] == "success"
    assert "this is version 1" in d.log("edited", run["dag_run_id"], "say")

    d.write("edited.yaml", d.text("edited.yaml", VERSION=2))
    d.wait_dag("edited", pred=lambda dag: dag.get("description") == "version 2")
    run = d.trigger("edited")
    assert d.wait_run("edited", run["dag_run_id"])["state"] == "success"
    assert "this is version 2" in d.log("edited", run["dag_run_id"], "say")

    # a file added while the server runs appears too
    d.install("fails.yaml")
    d.wait_dag("fails")


def test_invalid_file_is_an_import_error_and_others_run(make_dags):
    d = make_dags(files=["diamond.yaml"])
    d.wait_dag("diamond")
    d.install("broken.yaml")

    def error():
        errs = d.get("/importErrors")["import_errors"]
        return [e for e in errs if e["filename"].endswith("broken.yaml")]
    errs = wait_for(error, 30, "an import error for broken.yaml")
    assert len(errs) == 1, errs
    # the message names the line and the field
    assert "broken.yaml:5" in errs[0]["stack_trace"], errs
    assert "retires" in errs[0]["stack_trace"], errs
    status, _ = d.srv.api("GET", "/api/v1/dags/broken")
    assert status == 404

    r = d.srv.cli("dags", "list")
    assert r.returncode == 0, cli_describe(r)
    assert "diamond" in r.stdout and "import errors" in r.stdout, cli_describe(r)
    assert "broken.yaml:5" in r.stdout and "retires" in r.stdout, cli_describe(r)

    # the other DAG still runs
    run = d.trigger("diamond")
    assert d.wait_run("diamond", run["dag_run_id"])["state"] == "success"

    # fixed, it loads and its import error goes away
    d.write("broken.yaml", d.text("broken.yaml").replace("retires", "retries"))
    d.wait_dag("broken")
    wait_for(lambda: not error(), 30, "the import error of broken.yaml to go")
