"""A DAG file's top-level Variable.get at its parse (docs/airflow.md, "Variables at a file's
parse"): the server gives the parse the variables the file names literally, the DAG follows
a variable's change (the file is parsed again), a secret key is refused with an import error
that names it, a computed key is not given; warm and cold processors alike.  The DAG follows
`weir variables set` and a task's Variable.set."""

import os
import sys

import pytest

from conftest import cli_describe, wait_for
from dagtest import Dags, dag_config

TABLES = '''\
from airflow import DAG
from airflow.models import Variable
from airflow.operators.bash import BashOperator

ENV = Variable.get("env")
TABLES = Variable.get("tables", deserialize_json=True)
with DAG("tables_" + ENV, schedule=None):
    for t in TABLES:
        BashOperator(task_id="load_" + t, bash_command="true")
'''

SECRET = '''\
from airflow import DAG
from airflow.models import Variable
from airflow.operators.bash import BashOperator

TOKEN = Variable.get("api_token", default_var="none")
with DAG("secret_parse", schedule=None):
    BashOperator(task_id="t", bash_command="echo " + TOKEN)
'''

COMPUTED = '''\
from airflow import DAG
from airflow.models import Variable
from airflow.operators.bash import BashOperator

NAME = "e" + "nv"
with DAG("computed_" + Variable.get(NAME), schedule=None):
    BashOperator(task_id="t", bash_command="true")
'''

PLAIN = '''\
from airflow import DAG
from airflow.operators.bash import BashOperator

with DAG("plain_parse", schedule=None):
    BashOperator(task_id="t", bash_command="true")
'''

SETTER = '''\
from airflow import DAG
from airflow.decorators import task
from airflow.models import Variable

with DAG("setter", schedule=None):
    @task
    def grow():
        Variable.set("tables", '["orders", "payments", "refunds", "returns"]')

    grow()
'''

SECRET_VALUE = "s3cr3t-parse-value-7f1c"


def import_error(d, name):
    errs = d.get("/importErrors")["import_errors"]
    found = [e for e in errs if e["filename"].endswith("/" + name)]
    return found[0] if found else None


def task_ids(d, dag_id):
    status, body = d.srv.api("GET", "/api/v1/dags/%s/tasks" % dag_id)
    return sorted(t["task_id"] for t in body["tasks"]) if status == 200 else None


def processed(d, name):
    """How many parses of NAME the server's log tells of."""
    return d.srv.log_path.read_text(errors="replace").count("DAG file %s: processed"
                                                            % (d.dir / name))


@pytest.mark.parametrize("warm", ["1", "0"], ids=["warm", "cold"])
def test_top_level_variables_at_parse(make_server, tmp_path, warm):
    srv = make_server(config=dag_config(), start=False)
    srv.extra_env["WEIR_AIRFLOW_PYTHON"] = sys.executable
    srv.extra_env["WEIR_AIRFLOW_WARM_PROCESSOR"] = warm
    srv.extra_env["AIRFLOW_VAR_ENV"] = "prod"  # the server's environment, as Airflow reads it
    d = Dags(srv, tmp_path)
    for name, text in (("tables.py", TABLES), ("secret.py", SECRET),
                       ("computed.py", COMPUTED), ("plain.py", PLAIN), ("setter.py", SETTER)):
        d.write(name, text)
    srv.start()
    d.wait_dag("plain_parse")

    # no `tables` yet: the file's import error is Airflow's KeyError
    e = wait_for(lambda: import_error(d, "tables.py"), 30, "tables.py's import error")
    assert "Variable tables does not exist" in e["stack_trace"], e

    # the variable set: the file is parsed again, its DAG has a task per table
    r = srv.cli("variables", "set", "tables", '["orders", "users"]')
    assert r.returncode == 0, cli_describe(r)
    wait_for(lambda: task_ids(d, "tables_prod") == ["load_orders", "load_users"], 30,
             "tables_prod with a task per table")
    wait_for(lambda: import_error(d, "tables.py") is None, 30, "the import error cleared")

    # changed: the tasks follow
    r = srv.cli("variables", "set", "tables", '["orders", "payments", "refunds"]')
    assert r.returncode == 0, cli_describe(r)
    wait_for(lambda: task_ids(d, "tables_prod") ==
             ["load_orders", "load_payments", "load_refunds"], 30, "the tasks of the new list")

    # a task's Variable.set, written when its try succeeds, parses the file again too
    d.wait_dag("setter")
    run = d.trigger("setter")["dag_run_id"]
    assert d.wait_run("setter", run)["state"] == "success", d.tis("setter", run)
    wait_for(lambda: task_ids(d, "tables_prod") ==
             ["load_orders", "load_payments", "load_refunds", "load_returns"], 30,
             "the tasks of the list the task set")

    # a secret key is refused at parse, its default notwithstanding, and its value shows
    # nowhere
    status, body = srv.api("POST", "/api/v1/variables", {"key": "api_token",
                                                         "value": SECRET_VALUE})
    assert status == 200, body
    e = wait_for(lambda: import_error(d, "secret.py"), 30, "secret.py's import error")
    assert "Variable api_token is secret" in e["stack_trace"], e
    assert "weir gives no secret variable to a DAG file's parse" in e["stack_trace"]
    assert "secret_parse" not in [x["dag_id"] for x in d.get("/dags")["dags"]]

    # a computed key is not given, and the error says why
    e = wait_for(lambda: import_error(d, "computed.py"), 30, "computed.py's import error")
    assert "Variable env does not exist" in e["stack_trace"], e
    assert "its name is not written out in the DAG file" in e["stack_trace"], e

    # a file that read no variable is not parsed again when one changes
    assert processed(d, "plain.py") == 1 and processed(d, "setter.py") == 1, srv.log_text()
    before = processed(d, "tables.py")
    r = srv.cli("variables", "delete", "tables")
    assert r.returncode == 0, cli_describe(r)
    e = wait_for(lambda: import_error(d, "tables.py"), 30, "tables.py's import error again")
    assert "Variable tables does not exist" in e["stack_trace"], e
    assert processed(d, "tables.py") > before
    assert processed(d, "plain.py") == 1 and processed(d, "setter.py") == 1, srv.log_text()

    log = srv.log_path.read_text(errors="replace")
    assert SECRET_VALUE not in log
    assert "orders" not in log  # no value of a variable in the server's log
    db = (srv.home / "weir.db").read_bytes()
    for wal in (srv.home / "weir.db-wal",):
        if wal.exists():
            db += wal.read_bytes()
    assert SECRET_VALUE.encode() not in db
