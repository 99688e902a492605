"""Secret variables (issue 25): a variable whose key holds a sensitive name (Airflow's
sensitive_var_conn_names: api_key, password, secret, token, ...) is "***" in the API's answers,
the CLI, a task's log, its rendered command and its job's spec, while the task itself gets the
value; weir.db never holds it in clear, and a store written before (a job's spec and a TI's
rendered command in clear) is masked at the server's first start on this version.
"""

import hashlib
import json
import sqlite3

from conftest import DEFAULT_CONFIG, cli_describe
from dagtest import Dags, dag_config

SECRETS = {"api_key": "k-API-7731-zq", "db_password": "pw'with-quote-5519",
           "my_secret_token": "tok-SECRET-0462"}
PLAIN = ("plain", "visible-value-88")


def store_bytes(srv):
    return b"".join((srv.home / n).read_bytes() for n in ("weir.db", "weir.db-wal")
                    if (srv.home / n).exists())


def set_variables(srv):
    for k, v in list(SECRETS.items()) + [PLAIN]:
        st, r = srv.api("POST", "/api/v1/variables", {"key": k, "value": v})
        assert st == 200, r


def run_secrets_dag(make_server, tmp_path):
    """A server with the secret variables set and one successful run of SECRET_DAG: (the
    server, its Dags, the run)."""
    srv = make_server(config=dag_config(), start=False)
    d = Dags(srv, tmp_path)
    d.write("secrets.yaml", SECRET_DAG.replace("@SIDE@", str(d.side)))
    srv.start()
    set_variables(srv)
    d.wait_dag("secrets")
    run = d.wait_run("secrets", d.trigger("secrets")["dag_run_id"])
    assert run["state"] == "success", run
    return srv, d, run


def test_the_api_and_the_cli_mask_secret_variables(server, tmp_path):
    set_variables(server)
    st, lst = server.api("GET", "/api/v1/variables")
    assert st == 200, lst
    got = {v["key"]: v["value"] for v in lst["variables"]}
    assert got == {"api_key": "***", "db_password": "***", "my_secret_token": "***",
                   "plain": PLAIN[1]}, got
    for k in SECRETS:
        st, v = server.api("GET", "/api/v1/variables/" + k)
        assert st == 200 and v["value"] == "***", v
    st, v = server.api("GET", "/api/v1/variables/plain")
    assert st == 200 and v["value"] == PLAIN[1], v
    # the answer of a write masks it too
    st, v = server.api("PATCH", "/api/v1/variables/api_key?update_mask=description",
                       {"key": "api_key", "value": "x", "description": "d"})
    assert st == 200 and v["value"] == "***" and v["description"] == "d", v

    r = server.cli("variables", "get", "api_key")
    assert r.returncode == 0 and r.stdout == "***\n", cli_describe(r)
    r = server.cli("variables", "get", "plain")
    assert r.returncode == 0 and r.stdout == PLAIN[1] + "\n", cli_describe(r)
    out = tmp_path / "vars.json"
    r = server.cli("variables", "export", out)
    assert r.returncode == 0 and "3 secret variables left out" in r.stdout, cli_describe(r)
    assert json.loads(out.read_text()) == {"plain": PLAIN[1]}
    everything = r.stdout + r.stderr + server.cli("variables", "list").stdout
    for value in SECRETS.values():
        assert value not in everything
        assert value.encode() not in store_bytes(server)


SECRET_DAG = """\
dag_id: secrets
params:
  side: "@SIDE@"
tasks:
  - task_id: t
    command: |
      echo "key={{ var.value.api_key }} pw={{ var.value.db_password }} plain={{ var.value.plain }}"
      printf %s {{ var.value.api_key }} | sha256sum | cut -c1-64 > {{ params.side }}/key
      printf %s {{ var.value.db_password }} | sha256sum | cut -c1-64 > {{ params.side }}/pw
"""


def test_a_task_gets_the_value_and_nothing_shows_it(make_server, tmp_path):
    srv, d, run = run_secrets_dag(make_server, tmp_path)
    # the task received the real values
    sha = lambda s: hashlib.sha256(s.encode()).hexdigest()
    assert (d.side / "key").read_text().strip() == sha(SECRETS["api_key"])
    assert (d.side / "pw").read_text().strip() == sha(SECRETS["db_password"])

    log = d.log("secrets", run["dag_run_id"], "t")
    assert "key=*** pw=*** plain=" + PLAIN[1] in log, log
    ti = d.tis("secrets", run["dag_run_id"])["t"]
    st, job = srv.api("GET", "/api/v1/jobs/%d" % ti["job_id"])
    assert st == 200, job
    assert "***" in ti["rendered_command"] and PLAIN[1] in ti["rendered_command"], ti
    shown = json.dumps(ti) + json.dumps(job)
    assert "***" in json.dumps(job["spec"]), job
    for value in SECRETS.values():
        for form in (value, value.replace("'", "'\\''")):
            assert form not in shown, (form, shown)
            assert form not in log
            assert form.encode() not in store_bytes(srv), form
    # the UI's JSON of the run shows the same masked command
    st, ui = srv.api("GET", "/api/v1/dags/secrets/dagRuns/%s/taskInstances/t"
                     % run["dag_run_id"])
    assert st == 200 and SECRETS["api_key"] not in json.dumps(ui), ui


def test_configured_sensitive_names(make_server):
    for names in ('[customer_pin, "IBAN"]', '"customer_pin, iban"'):
        srv = make_server(config=DEFAULT_CONFIG + "sensitive_var_conn_names: %s\n" % names)
        for k, v in (("customer_pin_1", "1234-5678"), ("my_iban", "DE00-1111"),
                     ("region", "eu-1"), ("api_key", "k-1")):
            srv.api("POST", "/api/v1/variables", {"key": k, "value": v})
        st, lst = srv.api("GET", "/api/v1/variables")
        got = {v["key"]: v["value"] for v in lst["variables"]}
        assert got == {"customer_pin_1": "***", "my_iban": "***", "region": "eu-1",
                       "api_key": "***"}, (names, got)
        srv.terminate()
    # a setting that is neither a list nor a text is bad input, named
    srv = make_server(config=DEFAULT_CONFIG + "sensitive_var_conn_names: 5\n", start=False)
    srv.start(wait=False)
    assert srv.proc.wait(60) != 0
    assert "sensitive_var_conn_names: expected a list of names" in srv.log_text()


def test_an_old_store_is_masked_at_the_first_start(make_server, tmp_path):
    """A store as a version before 13 left it: the value in a job's spec and a TI's rendered
    command in clear, no sealed specs, schema version 12."""
    srv, d, run = run_secrets_dag(make_server, tmp_path)
    job_id = d.tis("secrets", run["dag_run_id"])["t"]["job_id"]
    srv.terminate()

    value = SECRETS["api_key"]
    db = sqlite3.connect(str(srv.home / "weir.db"))
    spec = json.loads(db.execute("SELECT spec_json FROM jobs WHERE id = ?",
                                 (job_id,)).fetchone()[0])
    spec.pop("mask", None)
    spec["roles"] = {k: dict(r, command=r["command"].replace("***", value))
                     for k, r in spec["roles"].items()} if isinstance(spec["roles"], dict) \
        else spec["roles"]
    db.execute("UPDATE jobs SET spec_json = ? WHERE id = ?", (json.dumps(spec), job_id))
    db.execute("UPDATE task_instances SET rendered_command = replace(rendered_command, '***',"
               " ?)", (value,))
    db.execute("DROP TABLE job_sealed_specs")
    db.execute("DELETE FROM meta WHERE key = 'secrets_masked_names'")
    db.execute("UPDATE meta SET value = '12' WHERE key = 'schema_version'")
    db.commit()
    db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    db.close()
    assert value.encode() in store_bytes(srv)

    srv.start()
    ti = d.tis("secrets", run["dag_run_id"])["t"]
    st, job = srv.api("GET", "/api/v1/jobs/%d" % job_id)
    assert st == 200 and value not in json.dumps(job) and value not in json.dumps(ti), job
    assert "***" in ti["rendered_command"], ti
    srv.terminate()
    assert value.encode() not in store_bytes(srv)
    db = sqlite3.connect(str(srv.home / "weir.db"))
    assert db.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone()[0] \
        == "14"
    db.close()
