"""A templated value never reaches a place where the shell reads it as code (docs/security.md,
"Templated values in shell commands").  The probe's DAGs, a value inside arithmetic $((...)),
are import errors that name the file's line; a DAG that passes the value as a quoted argument
and checks it in the task runs with the probe's conf, prints the value as it is and runs
nothing from it."""

from conftest import wait_for
from dagtest import make_dags  # noqa: F401

# the probe's two commands, each with the value inside arithmetic
ARITH = """\
dag_id: probe_arith
params:
  x: "1"
tasks:
  - task_id: calc
    command: 'echo result=$(( {{ params.x }} + 1 ))'
"""

ARITH_DQ = """\
dag_id: probe_arith_dq
params:
  x: "1"
tasks:
  - task_id: noop
    command: "true"
  - task_id: calc
    command: echo "$(( {{ params.x }} ))"
"""

# what to write instead: the value as one quoted argument, and checked before arithmetic
SAFE = """\
dag_id: probe_safe
params:
  x: "1"
tasks:
  - task_id: calc
    command: >-
      printf 'value=%s\\n' {{ params.x }};
      case "$WEIR_PARAM_x" in
      ''|*[!0-9]*) echo "not a number";;
      *) echo "result=$((WEIR_PARAM_x + 1))";;
      esac
"""


def import_error(d, filename):
    def find():
        errs = d.get("/importErrors")["import_errors"]
        return [e for e in errs if e["filename"].endswith(filename)] or None
    return wait_for(find, 30, "an import error for %s" % filename)[0]["stack_trace"]


def test_value_in_arithmetic_is_an_import_error(make_dags):
    d = make_dags()
    d.write("probe_arith.yaml", ARITH)
    d.write("probe_arith_dq.yaml", ARITH_DQ)
    for name, line in (("probe_arith.yaml", 6), ("probe_arith_dq.yaml", 8)):
        msg = import_error(d, name)
        # the file's line, the field, the template's column, why, and what to do instead
        assert "%s:%d" % (name, line) in msg, msg
        assert "command" in msg, msg
        assert "{{ params.x }}" in msg and "arithmetic $((...))" in msg, msg
        assert "WEIR_PARAM_" in msg and "number" in msg, msg
        status, _ = d.srv.api("GET", "/api/v1/dags/%s" % name[:-5])
        assert status == 404


def test_probe_value_runs_nothing(make_dags):
    d = make_dags()
    d.write("probe_safe.yaml", SAFE)
    d.wait_dag("probe_safe")
    marker = d.side / "pwned"
    value = "a[$(id > %s)]" % marker

    run = d.trigger("probe_safe", conf={"x": value})
    assert d.wait_run("probe_safe", run["dag_run_id"])["state"] == "success"
    log = d.log("probe_safe", run["dag_run_id"], "calc")
    assert "value=%s" % value in log, log
    assert "not a number" in log, log
    assert not marker.exists()

    # a number goes through to the arithmetic
    run = d.trigger("probe_safe", conf={"x": "41"})
    assert d.wait_run("probe_safe", run["dag_run_id"])["state"] == "success"
    log = d.log("probe_safe", run["dag_run_id"], "calc")
    assert "value=41" in log and "result=42" in log, log
    assert not marker.exists()
