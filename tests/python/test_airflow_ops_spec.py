"""weir's Airflow operators and hooks without a server (docs/airflow.md): how each operator
becomes weir's task (_weir_airflow.operators: SQL as a sql task with its templates and
DB-API parameters bound, TriggerDagRunOperator as trigger_dag, the connections a Python task
lists), Connection read from weir's URI and JSON forms, SparkSubmitHook's command line as
Airflow's hook builds it, DbApiHook.run's results on a real (sqlite3) database, and the
branch operators' choices."""

import datetime as dt
import sqlite3
import sys

import pytest

from conftest import REPO

SITE = REPO / "python" / "weir" / "compat" / "airflow" / "site"
sys.path.insert(0, str(SITE))

from airflow import DAG  # noqa: E402
from airflow.exceptions import AirflowException, AirflowNotFoundException  # noqa: E402
from airflow.hooks.base import BaseHook  # noqa: E402
from airflow.models import Connection  # noqa: E402
from airflow.operators.datetime import BranchDateTimeOperator  # noqa: E402
from airflow.operators.python import PythonOperator  # noqa: E402
from airflow.operators.trigger_dagrun import TriggerDagRunOperator  # noqa: E402
from airflow.operators.weekday import BranchDayOfWeekOperator  # noqa: E402
from airflow.providers.apache.spark.hooks.spark_submit import SparkSubmitHook  # noqa: E402
from airflow.providers.common.sql.hooks.sql import DbApiHook, fetch_all_handler  # noqa: E402
from airflow.providers.common.sql.operators.sql import SQLExecuteQueryOperator  # noqa: E402
from airflow.providers.http.operators.http import SimpleHttpOperator  # noqa: E402
from airflow.providers.mysql.operators.mysql import MySqlOperator  # noqa: E402
from airflow.providers.postgres.operators.postgres import PostgresOperator  # noqa: E402

from _weir_airflow.spec import SpecError, dag_to_spec  # noqa: E402

START = dt.datetime(2024, 1, 1)


def tasks_of(dag):
    return {t["task_id"]: t for t in dag_to_spec(dag, "/dags/x.py", "python3")["tasks"]}


def test_sql_operators_become_sql_tasks_with_values_bound():
    with DAG("d", start_date=START, schedule=None) as dag:
        PostgresOperator(task_id="pg", postgres_conn_id="warehouse",
                         sql="INSERT INTO t VALUES ('{{ ds }}', {{ params.n }}, 'it''s', "
                             "%(who)s, '{{ ds }} 00:00') -- {{ not | bound }}",
                         parameters={"who": "me"})
        MySqlOperator(task_id="my", mysql_conn_id="shop", sql="SELECT %s, %s, '%%'",
                      parameters=[1, "{{ run_id }}"])
        SQLExecuteQueryOperator(task_id="plain", conn_id="db", sql="SELECT 1",
                                do_xcom_push=False)
    t = tasks_of(dag)
    assert "command" not in t["pg"] and t["pg"]["sql"] == {
        "conn": "warehouse", "max_rows": 10000, "return_rows": True,
        "statement": "INSERT INTO t VALUES (:weir_t0, :weir_t1, 'it''s', :who, :weir_t2) "
                     "-- {{ not | bound }}",
        "parameters": {"weir_t0": "{{ ds }}", "weir_t1": "{{ params.n }}", "who": "me",
                       "weir_t2": "{{ ds }} 00:00"}}
    # psycopg2's %s and %% (the MySQL driver's too) become weir's bound values
    assert t["my"]["sql"]["statement"] == "SELECT :weir_p0, :weir_p1, '%'"
    assert t["my"]["sql"]["parameters"] == {"weir_p0": 1, "weir_p1": "{{ run_id }}"}
    assert t["my"]["operator"] == "airflow.providers.mysql.operators.mysql.MySqlOperator"
    assert "return_rows" not in t["plain"]["sql"]


@pytest.mark.parametrize("sql,words", [
    ("SELECT * FROM {{ params.t | upper }}", "not an expression, a filter or a macro"),
    ("SELECT {{ macros.ds_add(ds, 1) }}", "not an expression"),
    ('SELECT * FROM "{{ params.table }}"', "a template inside a \"name\""),
    ("SELECT $$ {{ ds }} $$", "a template inside a $$ body"),
    ("{% for x in y %}SELECT 1{% endfor %}", "{{ name }} templates only"),
    ("SELECT 'never ends", "a quoted string that does not end"),
])
def test_sql_that_weir_cannot_bind_is_an_error_at_its_line(sql, words):
    with DAG("d", start_date=START, schedule=None) as dag:
        SQLExecuteQueryOperator(task_id="q", conn_id="db", sql=sql)
    with pytest.raises(SpecError) as e:
        dag_to_spec(dag, "/dags/x.py", "python3")
    assert words in str(e.value) and e.value.line > 0, str(e.value)


def test_a_sql_file_is_read_from_the_dag_folder(tmp_path):
    (tmp_path / "sql").mkdir()
    (tmp_path / "sql" / "load.sql").write_text("DELETE FROM t WHERE ds = '{{ ds }}';\n")
    with DAG("d", start_date=START, schedule=None) as dag:
        SQLExecuteQueryOperator(task_id="q", conn_id="db", sql="sql/load.sql")
        SQLExecuteQueryOperator(task_id="gone", conn_id="db", sql="sql/missing.sql")
    dag.fileloc = str(tmp_path / "x.py")
    with pytest.raises(SpecError, match="missing.sql is not in the DAG file's folder"):
        dag_to_spec(dag, dag.fileloc, "python3")
    del dag.task_dict["gone"]
    t = tasks_of(dag)["q"]["sql"]
    assert t["statement"] == "DELETE FROM t WHERE ds = :weir_t0;\n"
    assert t["parameters"] == {"weir_t0": "{{ ds }}"}


def test_sql_airflow_runs_otherwise_runs_in_python_without_templates():
    with DAG("d", start_date=START, schedule=None) as dag:
        SQLExecuteQueryOperator(task_id="many", conn_id="db", sql=["SELECT 1", "SELECT 2"])
        SQLExecuteQueryOperator(task_id="one", conn_id="db", sql="SELECT 1",
                                handler=lambda c: c.fetchone())
    t = tasks_of(dag)
    # a list's XCom is a list of results, another handler's is its own: the hook runs them
    for name in ("many", "one"):
        assert "_weir_airflow.run_task" in t[name]["command"] and "sql" not in t[name]
        assert t[name]["connections"] == ["db"]
    with DAG("e", start_date=START, schedule=None) as dag2:
        SQLExecuteQueryOperator(task_id="many", conn_id="db", sql=["SELECT '{{ ds }}'"])
    with pytest.raises(SpecError, match="never writes them into SQL text"):
        dag_to_spec(dag2, "/dags/x.py", "python3")


def test_trigger_dag_run_operator_becomes_trigger_dag():
    with DAG("d", start_date=START, schedule=None) as dag:
        TriggerDagRunOperator(task_id="go", trigger_dag_id="child",
                              trigger_run_id="from_{{ dag_run.run_id }}",
                              conf={"day": "{{ ds }}", "nested": {"x": ["{{ params.p }}", 1]}},
                              wait_for_completion=True, poke_interval=30,
                              allowed_states=["success"], failed_states=["failed"])
    t = tasks_of(dag)["go"]
    assert "command" not in t and "env" not in t
    assert t["trigger_dag"] == {
        "dag_id": "child", "run_id": "from_{{ run_id }}", "wait_for_completion": True,
        "conf": {"day": "{{ ds }}", "nested": {"x": ["{{ params.p }}", 1]}},
        "poke_interval": 30, "allowed_states": ["success"], "failed_states": ["failed"]}
    assert t["operator"] == "airflow.operators.trigger_dagrun.TriggerDagRunOperator"


@pytest.mark.parametrize("kwargs,words", [
    ({"logical_date": "2024-01-01"}, "logical_date"),
    ({"reset_dag_run": True}, "reset_dag_run"),
    ({"allowed_states": ["running"]}, "a run's end"),
    ({"conf": {"d": "{{ ds | upper }}"}}, "not an expression"),
])
def test_trigger_dag_run_operator_errors(kwargs, words):
    with DAG("d", start_date=START, schedule=None) as dag:
        TriggerDagRunOperator(task_id="go", trigger_dag_id="child", **kwargs)
    with pytest.raises(SpecError, match=words):
        dag_to_spec(dag, "/dags/x.py", "python3")


def test_a_python_task_lists_the_connections_its_arguments_name():
    with DAG("d", start_date=START, schedule=None,
             default_args={"connections": ["cache"]}) as dag:
        PythonOperator(task_id="py", python_callable=print,
                       op_kwargs={"source_conn_id": "pg", "target_conn_id": "pg"})
        PythonOperator(task_id="own", python_callable=print, connections=["a", "b"])
        SimpleHttpOperator(task_id="http", http_conn_id="api", endpoint="x")
        BranchDayOfWeekOperator(task_id="br", week_day="Monday",
                                follow_task_ids_if_true="py", follow_task_ids_if_false="own")
    t = tasks_of(dag)
    assert t["py"]["connections"] == ["pg", "cache"]
    assert t["own"]["connections"] == ["a", "b"]  # the task's own list over default_args'
    assert t["http"]["connections"] == ["api", "cache"]
    assert t["br"]["branch"] is True


def _reads_named_connections(table):
    from airflow.providers.mysql.hooks.mysql import MySqlHook

    hook = MySqlHook(mysql_conn_id="shop")
    BaseHook.get_connection("audit")
    name = "computed_" + table
    BaseHook.get_connection(name)  # computed at run time: not seen
    return hook


def test_a_python_task_lists_the_connections_its_callable_names():
    with DAG("d", start_date=START, schedule=None) as dag:
        PythonOperator(task_id="py", python_callable=_reads_named_connections,
                       op_kwargs={"table": "t"})
        PythonOperator(task_id="builtin", python_callable=print)
    t = tasks_of(dag)
    assert t["py"]["connections"] == ["shop", "audit"]
    assert "connections" not in t["builtin"]


def test_connection_from_weir_uri_and_json(monkeypatch):
    c = Connection(conn_id="w", uri="postgresql://etl:p%40ss%3Aw@db.internal:5432/dw?"
                                    "sslmode=require")
    assert (c.conn_type, c.host, c.port, c.login, c.password, c.schema) == (
        "postgres", "db.internal", 5432, "etl", "p@ss:w", "dw")
    assert c.extra_dejson == {"sslmode": "require"}
    assert Connection(uri=c.get_uri()).password == "p@ss:w"
    monkeypatch.setenv("WEIR_CONN_MY_API", '{"conn_type": "http", "host": "api.example", '
                                           '"port": "8080", "extra": {"X-Team": "etl"}}')
    api = BaseHook.get_connection("my-api")
    assert (api.conn_type, api.host, api.port, api.extra_dejson) == (
        "http", "api.example", 8080, {"X-Team": "etl"})
    with pytest.raises(AirflowNotFoundException, match="only the connections it lists"):
        BaseHook.get_connection("unlisted")


def spark_hook(monkeypatch, uri, **kwargs):
    if uri is None:
        monkeypatch.delenv("WEIR_CONN_SPARK_DEFAULT", raising=False)
    else:
        monkeypatch.setenv("WEIR_CONN_SPARK_DEFAULT", uri)
    return SparkSubmitHook(**kwargs)


def test_spark_submit_command_as_airflows_hook_builds_it(monkeypatch):
    h = spark_hook(monkeypatch, "spark://k8s%3A%2F%2Fapi.example:6443?namespace=etl&"
                                "deploy-mode=cluster&spark-binary=spark3-submit",
                   conf={"a": 1}, env_vars={"K": "v"}, total_executor_cores=4,
                   packages="p:q:1", java_class="org.Main", application_args=[1, "x"],
                   name="job")
    assert h._build_spark_submit_command("app.jar") == [
        "spark3-submit", "--master", "k8s://api.example:6443", "--conf", "a=1",
        "--conf", "spark.kubernetes.driverEnv.K=v",
        "--conf", "spark.kubernetes.namespace=etl", "--packages", "p:q:1",
        "--total-executor-cores", "4", "--name", "job", "--class", "org.Main",
        "--deploy-mode", "cluster", "app.jar", "1", "x"]
    # no connection: Airflow's default master, yarn; a local master passes env_vars to the
    # process instead of the command line
    assert spark_hook(monkeypatch, None)._build_spark_submit_command("a.py") == [
        "spark-submit", "--master", "yarn", "--name", "default-name", "a.py"]
    local = spark_hook(monkeypatch, "spark://local", env_vars={"K": "v"})
    assert "--conf" not in local._build_spark_submit_command("a.py") and local._env == {"K": "v"}
    with pytest.raises(AirflowException, match="not supported in standalone-cluster"):
        spark_hook(monkeypatch, "spark://spark%3A%2F%2Fm:7077?deploy-mode=cluster",
                   env_vars={"K": "v"})._build_spark_submit_command("a.py")
    with pytest.raises(RuntimeError, match="spark-binary"):
        spark_hook(monkeypatch, "spark://yarn?spark-binary=sh")


class SqliteHook(DbApiHook):
    """DbApiHook on a real sqlite3 database (the driver of Python's standard library)."""

    conn_name_attr = "sqlite_conn_id"
    placeholder = "?"

    def __init__(self, path, **kwargs):
        super().__init__(**kwargs)
        self.path = path

    def get_conn(self):
        return sqlite3.connect(self.path)

    def set_autocommit(self, conn, autocommit):
        conn.isolation_level = None if autocommit else ""


def test_db_api_hook_run_returns_as_airflows(tmp_path):
    h = SqliteHook(str(tmp_path / "db.sqlite"))
    h.run("CREATE TABLE t (n int, s text)")
    h.insert_rows("t", [(1, "a"), (2, "b")], target_fields=["n", "s"])
    assert h.get_records("SELECT n, s FROM t ORDER BY n") == [(1, "a"), (2, "b")]
    assert h.get_first("SELECT count(*) FROM t WHERE n > ?", (1,)) == (1,)
    # one string: the last statement's result; a list: one result per statement
    assert h.run("SELECT 1; SELECT 2", split_statements=True,
                 handler=fetch_all_handler) == [(2,)]
    assert h.run("SELECT 1; SELECT 2", split_statements=True, return_last=False,
                 handler=fetch_all_handler) == [[(1,)], [(2,)]]
    assert h.run(["SELECT 3", "UPDATE t SET n = n"], handler=fetch_all_handler) == [[(3,)],
                                                                                   None]


def test_branch_date_time_operator_chooses_by_the_logical_date():
    with DAG("d", start_date=START, schedule=None):
        op = BranchDateTimeOperator(task_id="b", target_lower=dt.time(22),
                                    target_upper=dt.time(2), follow_task_ids_if_true="night",
                                    follow_task_ids_if_false=["day"],
                                    use_task_logical_date=True)
    utc = dt.timezone.utc
    assert op.choose_branch({"logical_date": dt.datetime(2024, 1, 1, 23, tzinfo=utc)}) == \
        "night"
    assert op.choose_branch({"logical_date": dt.datetime(2024, 1, 1, 12, tzinfo=utc)}) == \
        ["day"]
    with pytest.raises(AirflowException, match="Both target_upper and target_lower"):
        BranchDateTimeOperator(task_id="c", follow_task_ids_if_true="a",
                               follow_task_ids_if_false="b")


def test_task_concurrency_becomes_weir_task_keys():
    """max_active_tis_per_dag (task_concurrency, its old name, and from default_args) and
    max_active_tis_per_dagrun are weir's task keys of the same names; a mapped task's
    partial keeps them; 0 or a non-number is refused with the task's name."""
    from airflow.decorators import task

    with DAG("d", start_date=START, schedule=None,
             default_args={"max_active_tis_per_dagrun": 3}) as dag:
        PythonOperator(task_id="both", python_callable=print, max_active_tis_per_dag=2,
                       max_active_tis_per_dagrun=1)
        old = PythonOperator(task_id="old", python_callable=print, task_concurrency=4)
        PythonOperator(task_id="plain", python_callable=print, max_active_tis_per_dagrun=None)

        @task(max_active_tis_per_dag=1)
        def each(i):
            return i

        each.expand(i=[1, 2])
    t = tasks_of(dag)
    assert (t["both"]["max_active_tis_per_dag"], t["both"]["max_active_tis_per_dagrun"]) == \
        (2, 1)
    assert t["old"]["max_active_tis_per_dag"] == 4 and old.task_concurrency == 4
    assert t["old"]["max_active_tis_per_dagrun"] == 3  # default_args
    assert "max_active_tis_per_dag" not in t["plain"]
    assert "max_active_tis_per_dagrun" not in t["plain"]
    assert t["each"]["max_active_tis_per_dag"] == 1
    with DAG("z", start_date=START, schedule=None) as bad:
        PythonOperator(task_id="never", python_callable=print, max_active_tis_per_dag=0)
    with pytest.raises(SpecError, match=r"task never: max_active_tis_per_dag 0: expected"):
        tasks_of(bad)
