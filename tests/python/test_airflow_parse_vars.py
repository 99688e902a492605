"""A DAG file's top-level Variable.get at its parse (_weir_airflow.parse_vars), without a
server: the variables given as the server gives them, on a cold processor's standard input
(WEIR_AIRFLOW_PARSE_VARS=stdin) or in a warm processor's request; the answer's
`variables_read`, `variables_wanted`, a secret key refused, a computed key not given."""

import json
import os
import subprocess
import sys
import textwrap

from conftest import AIRFLOW_SITE as SITE

TABLES = """\
from airflow import DAG
from airflow.models import Variable
from airflow.operators.bash import BashOperator

ENV = Variable.get("env")
TABLES = Variable.get("tables", deserialize_json=True)
with DAG("tables_" + ENV, schedule=None):
    for t in TABLES:
        BashOperator(task_id="load_" + t, bash_command="true")
"""


def write(tmp_path, name, text):
    path = tmp_path / name
    path.write_text(textwrap.dedent(text))
    return str(path)


def cold(tmp_path, path, variables=None):
    """The processor run as the server runs it cold: the answer (its last line)."""
    env = dict(os.environ, PYTHONPATH=str(SITE))
    env.pop("WEIR_AIRFLOW_PARSE_VARS", None)
    if variables is not None:
        env["WEIR_AIRFLOW_PARSE_VARS"] = "stdin"
    r = subprocess.run([sys.executable, "-m", "_weir_airflow.processor", path, str(tmp_path)],
                       input=json.dumps(variables) if variables is not None else "",
                       capture_output=True, text=True, env=env, cwd=tmp_path, timeout=60)
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout.strip().splitlines()[-1])


def tasks(answer):
    assert "error" not in answer, answer.get("error")
    return {d["dag_id"]: sorted(t["task_id"] for t in d["tasks"]) for d in answer["dags"]}


def test_given_variables_shape_the_dag(tmp_path):
    path = write(tmp_path, "tables.py", TABLES)
    a = cold(tmp_path, path, {"values": {"env": "prod", "tables": '["a", "b"]'}})
    assert tasks(a) == {"tables_prod": ["load_a", "load_b"]}
    assert a["variables_read"] == ["env", "tables"]


def test_a_first_parse_asks_for_the_names_of_the_file(tmp_path):
    # the server knows no names yet: the parse ends at the first read and names them all
    path = write(tmp_path, "tables.py", TABLES)
    a = cold(tmp_path, path, {"values": {}, "refused": []})
    assert a == {"file": path, "variables_wanted": ["env", "tables"]}


def test_a_wanted_key_is_asked_for_even_when_the_file_catches_everything(tmp_path):
    path = write(tmp_path, "caught.py", """\
        from airflow import DAG
        from airflow.models import Variable
        from airflow.operators.bash import BashOperator
        try:
            ENV = Variable.get("env")
        except Exception:
            ENV = "dev"
        with DAG("caught", schedule=None):
            BashOperator(task_id="t", bash_command="echo " + ENV)
        """)
    assert cold(tmp_path, path, {"values": {}})["variables_wanted"] == ["env"]


def test_an_absent_variable_takes_its_default_and_is_still_read(tmp_path):
    path = write(tmp_path, "dflt.py", """\
        from airflow import DAG
        from airflow.models import Variable
        from airflow.operators.bash import BashOperator
        with DAG("dflt_" + Variable.get("env", default_var="dev"), schedule=None):
            BashOperator(task_id="t", bash_command="true")
        """)
    a = cold(tmp_path, path, {"values": {"env": None}})
    assert list(tasks(a)) == ["dflt_dev"]
    assert a["variables_read"] == ["env"]  # its set later parses the file again


def test_an_absent_variable_without_default_is_the_import_error(tmp_path):
    path = write(tmp_path, "tables.py", TABLES)
    a = cold(tmp_path, path, {"values": {"env": None, "tables": None}})
    assert "KeyError: 'Variable env does not exist'" in a["error"]["message"]
    assert a["error"]["line"] == 5


def test_a_secret_key_is_refused_whatever_its_default(tmp_path):
    path = write(tmp_path, "secret.py", """\
        from airflow import DAG
        from airflow.models import Variable
        from airflow.operators.bash import BashOperator
        try:
            TOKEN = Variable.get("api_token", default_var="")
        except Exception:
            TOKEN = "caught"
        with DAG("secret", schedule=None):
            BashOperator(task_id="t", bash_command="echo " + TOKEN)
        """)
    a = cold(tmp_path, path, {"values": {}, "refused": ["api_token"]})
    msg = a["error"]["message"]
    assert "Variable api_token is secret" in msg
    assert "weir gives no secret variable to a DAG file's parse" in msg
    assert "{{ var.value.api_token }}" in msg
    assert a["variables_read"] == ["api_token"]


def test_a_computed_key_is_not_given(tmp_path):
    path = write(tmp_path, "computed.py", """\
        from airflow import DAG
        from airflow.models import Variable
        from airflow.operators.bash import BashOperator
        NAME = "e" + "nv"
        with DAG("computed_" + Variable.get(NAME), schedule=None):
            BashOperator(task_id="t", bash_command="true")
        """)
    # even offered (another file's name, say), a key this file does not write out is not its
    a = cold(tmp_path, path, {"values": {"env": "prod"}})
    msg = a["error"]["message"]
    assert "KeyError" in msg and "Variable env does not exist" in msg
    assert "its name is not written out in the DAG file" in msg
    assert a["error"]["line"] == 5
    assert a["variables_read"] == []


def test_without_variables_the_parse_says_so(tmp_path):
    # `weir dags check`, a processor run by hand: no variables at all, no report
    path = write(tmp_path, "tables.py", TABLES)
    a = cold(tmp_path, path)
    assert "was given no variables for this parse" in a["error"]["message"]
    assert "variables_read" not in a and "variables_wanted" not in a


def test_a_warm_child_gets_the_request_s_variables(warm, tmp_path):
    path = write(tmp_path, "tables.py", TABLES)
    req = {"id": 1, "file": path, "timeout_ms": 30000, "max_bytes": 1 << 20, "drain_ms": 1000,
           "variables": {"values": {"env": "dev", "tables": '["x"]'}, "refused": []}}
    warm.stdin.write((json.dumps(req) + "\n").encode())
    warm.stdin.flush()
    answer = json.loads(warm.stdout.readline())
    doc = json.loads(answer["out"].strip().splitlines()[-1])
    assert tasks(doc) == {"tables_dev": ["load_x"]}
    assert doc["variables_read"] == ["env", "tables"]
    # the values stay out of the child's environment (the file's processes inherit it)
    assert "WEIR_AIRFLOW_PARSE_VARS" not in answer["out"]
