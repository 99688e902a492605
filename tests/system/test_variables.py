"""Variables (issue 12): Airflow's /api/v1/variables on a real server, the CLI (set, get,
list, delete, import, export), the sources and their precedence, {{ var.value.K }} and
{{ var.json.K.field }} in a DAG's commands, and `weir dags test --conn/--var`.
"""

import json
import os
import subprocess

from conftest import DEFAULT_CONFIG, WEIR_BIN, cli_describe
from dagtest import Dags, dag_config


def test_crud_in_airflow_shapes(server):
    st, v = server.api("POST", "/api/v1/variables", {"key": "region", "value": "eu-1",
                                                      "description": "where"})
    assert st == 200 and v == {"key": "region", "value": "eu-1", "description": "where",
                               "source": "store"}, v
    # POST replaces, as Airflow's Variable.set does
    st, v = server.api("POST", "/api/v1/variables", {"key": "region", "value": "eu-2"})
    assert st == 200 and v["value"] == "eu-2", v
    st, v = server.api("GET", "/api/v1/variables/region")
    assert st == 200 and v["value"] == "eu-2", v
    server.api("POST", "/api/v1/variables", {"key": "limits", "value": '{"rows": 10}'})
    st, lst = server.api("GET", "/api/v1/variables")
    assert st == 200 and lst["total_entries"] == 2, lst
    assert [x["key"] for x in lst["variables"]] == ["limits", "region"]
    st, lst = server.api("GET", "/api/v1/variables?order_by=-key&limit=1")
    assert [x["key"] for x in lst["variables"]] == ["region"], lst

    st, v = server.api("PATCH", "/api/v1/variables/region?update_mask=description",
                       {"key": "region", "value": "ignored", "description": "d2"})
    assert st == 200 and v["value"] == "eu-2" and v["description"] == "d2", v
    st, v = server.api("PATCH", "/api/v1/variables/region", {"key": "region", "value": "eu-3"})
    assert st == 200 and v["value"] == "eu-3", v
    st, v = server.api("PATCH", "/api/v1/variables/region", {"key": "other", "value": "x"})
    assert st == 400, v
    st, v = server.api("PATCH", "/api/v1/variables/nope", {"key": "nope", "value": "x"})
    assert st == 404, v

    for body in ({"value": "x"}, {"key": "k"}, {"key": "k", "value": 5},
                 {"key": "a b", "value": "x"}, {"key": "k", "value": "x", "extra": 1}):
        st, r = server.api("POST", "/api/v1/variables", body)
        assert st == 400 and r["status"] == 400, (body, r)

    status, _, data = server.request("DELETE", "/api/v1/variables/region")
    assert status == 204 and data == b""
    st, r = server.api("GET", "/api/v1/variables/region")
    assert st == 404 and r["status"] == 404, r
    st, r = server.api("DELETE", "/api/v1/variables/region")
    assert st == 404, r
    # values are sealed in the store's file too
    server.api("POST", "/api/v1/variables", {"key": "api_key", "value": "k-SEALED-4242"})
    data = b"".join((server.home / n).read_bytes() for n in ("weir.db", "weir.db-wal")
                    if (server.home / n).exists())
    assert b"k-SEALED-4242" not in data


def test_sources_and_precedence(make_server):
    config = DEFAULT_CONFIG + ("variables:\n  from_config: c1\n  shadowed: config\n"
                               "  env_wins: config\n  structured: {a: [1, 2]}\n")
    srv = make_server(config=config, start=False)
    # Airflow's names too (an Airflow deployment's environment), weir's first
    srv.extra_env = {"WEIR_VAR_ENV_WINS": "from-env", "WEIR_VAR_ONLY_ENV": "e1",
                     "AIRFLOW_VAR_ENV_WINS": "airflow-loses", "AIRFLOW_VAR_AF_ONLY": "a1"}
    srv.start()
    srv.api("POST", "/api/v1/variables", {"key": "shadowed", "value": "store"})
    srv.api("POST", "/api/v1/variables", {"key": "env_wins", "value": "store"})
    st, lst = srv.api("GET", "/api/v1/variables")
    got = {v["key"]: (v["value"], v["source"]) for v in lst["variables"]}
    assert got == {"from_config": ("c1", "config"), "shadowed": ("store", "store"),
                   "env_wins": ("from-env", "environment"),
                   "only_env": ("e1", "environment"), "af_only": ("a1", "environment"),
                   "structured": ('{"a":[1,2]}', "config")}, got
    st, r = srv.api("PATCH", "/api/v1/variables/only_env", {"key": "only_env", "value": "x"})
    assert st == 404 and "environment" in r["detail"], r


def test_cli(server, tmp_path):
    r = server.cli("variables", "set", "region", "eu-1", "--description", "where")
    assert r.returncode == 0, cli_describe(r)
    r = server.cli("variables", "get", "region")
    assert r.returncode == 0 and r.stdout == "eu-1\n", cli_describe(r)
    r = server.cli("variables", "set", "cfg", '{"a": {"b": 3}}', "--json")
    assert r.returncode == 0, cli_describe(r)
    r = server.cli("variables", "get", "cfg", "--json")
    assert json.loads(r.stdout) == {"a": {"b": 3}}, cli_describe(r)
    r = server.cli("variables", "set", "bad", "{nope", "--json")
    assert r.returncode == 2, cli_describe(r)
    r = server.cli("variables", "get", "absent")
    assert r.returncode == 1 and "not set" in r.stderr, cli_describe(r)
    r = server.cli("variables", "get", "absent", "--default", "dflt")
    assert r.returncode == 0 and r.stdout == "dflt\n", cli_describe(r)
    r = server.cli("variables", "list")
    assert "region" in r.stdout and "cfg" in r.stdout, cli_describe(r)

    out = tmp_path / "vars.json"
    r = server.cli("variables", "export", out)
    assert r.returncode == 0, cli_describe(r)
    assert json.loads(out.read_text()) == {"region": "eu-1", "cfg": {"a": {"b": 3}}}
    assert (out.stat().st_mode & 0o777) == 0o600

    imp = tmp_path / "in.json"
    imp.write_text(json.dumps({"region": "us-1", "n": 5, "obj": {"x": True}}))
    r = server.cli("variables", "import", imp, "--action-on-existing-key", "skip")
    assert r.returncode == 0 and "2 of 3" in r.stdout, cli_describe(r)
    assert server.cli("variables", "get", "region").stdout == "eu-1\n"
    assert server.cli("variables", "get", "n").stdout == "5\n"
    r = server.cli("variables", "import", imp, "--action-on-existing-key", "fail")
    assert r.returncode == 1 and "exists" in r.stderr, cli_describe(r)
    r = server.cli("variables", "import", imp)
    assert r.returncode == 0 and "3 of 3" in r.stdout, cli_describe(r)
    assert server.cli("variables", "get", "region").stdout == "us-1\n"
    imp.write_text("[1, 2]")
    r = server.cli("variables", "import", imp)
    assert r.returncode == 2, cli_describe(r)

    r = server.cli("variables", "delete", "region")
    assert r.returncode == 0, cli_describe(r)
    r = server.cli("variables", "delete", "region")
    assert r.returncode == 1, cli_describe(r)


TEMPLATED = """\
dag_id: templated
params:
  side: "@SIDE@"
tasks:
  - task_id: t
    command: |
      echo "{{ var.value.greeting }}|{{ var.json.cfg.limits.rows }}|{{ var.json.cfg.names.1 }}" > {{ params.side }}/vars
      echo "{{ conn.wh.host }}|{{ conn.wh.port }}|{{ conn.wh.login }}|{{ conn.wh.schema }}|{{ conn.wh.extra.sslmode }}" > {{ params.side }}/conn
"""


def test_templates_read_variables_and_connections(make_server, tmp_path):
    srv = make_server(config=dag_config(), start=False)
    d = Dags(srv, tmp_path)
    d.write("templated.yaml", TEMPLATED.replace("@SIDE@", str(d.side)))
    srv.start()
    d.wait_dag("templated")
    # a variable not set yet: the try fails (it is known only at run time) and says which
    run = d.wait_run("templated", d.trigger("templated")["dag_run_id"])
    assert run["state"] == "failed", run
    log = d.log("templated", run["dag_run_id"], "t")
    assert 'variable "greeting" is not set' in log, log

    # a value that would break the shell reaches the command as one word
    srv.api("POST", "/api/v1/variables", {"key": "greeting", "value": "hi $(touch x); 'q'"})
    srv.api("POST", "/api/v1/variables",
            {"key": "cfg", "value": json.dumps({"limits": {"rows": 7}, "names": ["a", "b"]})})
    srv.api("POST", "/api/v1/connections",
            {"connection_id": "wh", "conn_type": "postgres", "host": "db.x", "port": 5432,
             "login": "u", "password": "never-in-a-template", "schema": "dw",
             "extra": json.dumps({"sslmode": "require"})})
    run = d.wait_run("templated", d.trigger("templated")["dag_run_id"])
    assert run["state"] == "success", run
    assert (d.side / "vars").read_text() == "hi $(touch x); 'q'|7|b\n"
    assert (d.side / "conn").read_text() == "db.x|5432|u|dw|require\n"


def test_a_password_in_a_template_is_refused_when_the_file_loads(make_server, tmp_path):
    srv = make_server(config=dag_config(), start=False)
    d = Dags(srv, tmp_path)
    d.write("pw.yaml", "dag_id: pw\ntasks:\n  - task_id: t\n"
                       "    command: echo {{ conn.wh.password }}\n")
    srv.start()
    def import_error():
        st, body = srv.api("GET", "/api/v1/importErrors")
        errs = [e for e in body.get("import_errors", []) if "pw.yaml" in e["filename"]]
        return errs[0] if errs else None
    from conftest import wait_for
    err = wait_for(import_error, 30, "the import error of pw.yaml")
    assert "password is never put into a template" in err["stack_trace"], err


DAG_TEST = """\
dag_id: bench
params:
  side: "@SIDE@"
tasks:
  - task_id: t
    connections: [target]
    command: |
      echo "$WEIR_CONN_TARGET" > {{ params.side }}/uri
      echo "{{ var.value.mode }}|{{ conn.target.host }}" > {{ params.side }}/seen
      echo "$WEIR_CONN_TARGET"
"""


def test_dags_test_overrides_win(make_server, tmp_path):
    side = tmp_path / "side"
    side.mkdir()
    dag = tmp_path / "bench.yaml"
    dag.write_text(DAG_TEST.replace("@SIDE@", str(side)))
    home = tmp_path / "home"
    home.mkdir()
    (home / "weir.yaml").write_text(DEFAULT_CONFIG + "connections:\n"
                                    "  target: postgres://cfg@cfg-host/db\n"
                                    "variables:\n  mode: from-config\n")
    env = dict(os.environ, WEIR_HOME=str(home), TMPDIR=str(tmp_path))
    env.pop("WEIR_LOG", None)

    def run(*args, extra=None):
        e = dict(env, **(extra or {}))
        return subprocess.run([WEIR_BIN, "dags", "test", str(dag)] + list(args),
                              capture_output=True, text=True, env=e, timeout=300)

    r = run()
    assert r.returncode == 0, cli_describe(r)
    assert (side / "seen").read_text() == "from-config|cfg-host\n"
    # the environment wins over the configuration
    r = run(extra={"WEIR_CONN_TARGET": "postgres://e:env-pw-1@env-host/db",
                   "WEIR_VAR_MODE": "from-env"})
    assert r.returncode == 0, cli_describe(r)
    assert (side / "seen").read_text() == "from-env|env-host\n"
    # the flags win over everything
    r = run("--conn", "target=postgresql://u:flag-pw-2@127.0.0.1:5999/t", "--var", "mode=flag",
            extra={"WEIR_CONN_TARGET": "postgres://e:env-pw-1@env-host/db",
                   "WEIR_VAR_MODE": "from-env"})
    assert r.returncode == 0, cli_describe(r)
    assert (side / "seen").read_text() == "flag|127.0.0.1\n"
    assert (side / "uri").read_text() == "postgresql://u:flag-pw-2@127.0.0.1:5999/t\n"
    assert "flag-pw-2" not in r.stdout + r.stderr
    # a bad flag is bad input, named
    r = run("--conn", "target")
    assert r.returncode == 2 and "--conn" in r.stderr, cli_describe(r)
    r = run("--conn", "target=nonsense")
    assert r.returncode == 2 and "--conn" in r.stderr, cli_describe(r)
    r = run("--var", "a b=1")
    assert r.returncode == 2 and "--var" in r.stderr, cli_describe(r)
