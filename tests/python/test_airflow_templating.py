"""Rendering operators' template fields as Airflow 2.x does
(weir/compat/airflow/templating.py): Airflow's filters, StrictUndefined, nested values and
objects, template files found beside the DAG file or on template_searchpath, native
rendering, user-defined macros and filters."""

import collections
import types

import jinja2
import pendulum
import pytest

from weir.compat.airflow.context import build_context
from weir.compat.airflow.templating import (get_template_env, render_template,
                                            render_template_fields, resolve_template_files)


class Op:
    """An operator reduced to what rendering reads."""

    template_fields = ("bash_command", "env", "args", "nested", "plain_empty")
    template_ext = (".sh", ".bash")

    def __init__(self, dag, **fields):
        self.dag, self.task_id = dag, "work"
        self.bash_command = self.env = self.args = self.nested = None
        self.plain_empty = ""
        self.untemplated = "{{ ds }}"
        for k, v in fields.items():
            setattr(self, k, v)


class Inner:
    template_fields = ["path"]

    def __init__(self, path):
        self.path = path


def make_dag(folder, **kw):
    return types.SimpleNamespace(dag_id="etl", fileloc=str(folder / "etl.py"), schedule="@daily",
                                 timezone="UTC", params={"table": "events"}, **kw)


def context_for(dag, **kw):
    task = types.SimpleNamespace(task_id="work")
    ti = types.SimpleNamespace(dag_id="etl", task_id="work", run_id="r", try_number=1,
                               map_index=-1, xcom_pull=lambda **_: "pulled", xcom_push=None)
    return build_context(dag=dag, task=task, ti=ti, run_id="r",
                         logical_date=pendulum.datetime(2018, 1, 1, tz="UTC"), **kw)


def test_airflows_filters_and_strict_undefined(tmp_path):
    dag = make_dag(tmp_path)
    env = get_template_env(dag)
    c = context_for(dag)
    assert isinstance(env, jinja2.sandbox.SandboxedEnvironment)
    assert env.undefined is jinja2.StrictUndefined
    out = render_template("{{ logical_date | ds }} {{ logical_date | ds_nodash }} "
                          "{{ logical_date | ts }} {{ logical_date | ts_nodash }} "
                          "{{ logical_date | ts_nodash_with_tz }} {{ none | ds }}",
                          dict(c, none=None), env)
    assert out == ("2018-01-01 20180101 2018-01-01T00:00:00+00:00 20180101T000000 "
                   "20180101T000000+0000 None")
    op = Op(dag, bash_command="echo {{ dss }}")
    with pytest.raises(jinja2.UndefinedError, match="'dss' is undefined") as err:
        render_template_fields(op, c)
    assert "template field 'bash_command' of task 'work'" in "".join(err.value.__notes__)
    # a DAG may choose Jinja's lenient default, as Airflow's template_undefined allows
    lenient = make_dag(tmp_path, template_undefined=jinja2.Undefined)
    op = Op(lenient, bash_command="echo [{{ dss }}]")
    render_template_fields(op, context_for(lenient))
    assert op.bash_command == "echo []"


def test_nested_fields_are_rendered_in_place(tmp_path):
    dag = make_dag(tmp_path)
    Pair = collections.namedtuple("Pair", "a b")
    inner = Inner("/data/{{ ds_nodash }}")
    op = Op(dag, bash_command="run {{ params.table }} {{ ds }}",
            env={"DAY": "{{ ds }}", "N": 3, "LIST": ["{{ ds_nodash }}", ("{{ run_id }}",)]},
            args=[Pair("{{ params.table }}", 1), {"{{ not a key }}"}, None],
            nested=inner)
    op.args[1] = {"{{ ti.xcom_pull(task_ids='x') }}"}
    render_template_fields(op, context_for(dag))
    assert op.bash_command == "run events 2018-01-01"
    assert op.env == {"DAY": "2018-01-01", "N": 3, "LIST": ["20180101", ("r",)]}
    assert op.args[0] == Pair("events", 1) and isinstance(op.args[0], Pair)
    assert op.args[1] == {"pulled"} and op.args[2] is None
    assert op.nested is inner and inner.path == "/data/20180101"
    assert op.plain_empty == "" and op.untemplated == "{{ ds }}"


def test_a_field_that_names_no_attribute_is_an_error(tmp_path):
    dag = make_dag(tmp_path)
    op = Op(dag)
    op.template_fields = ("sql",)
    with pytest.raises(AttributeError, match="'sql' is named in template_fields but Op has no"):
        render_template_fields(op, context_for(dag))


def test_template_files_beside_the_dag_file_and_on_the_search_path(tmp_path):
    (tmp_path / "dags").mkdir()
    (tmp_path / "shared").mkdir()
    (tmp_path / "dags" / "run.sh").write_text("echo {{ ds }} {{ params.table }}\n")
    (tmp_path / "shared" / "common.sh").write_text("{% include 'run.sh' %}\necho shared\n")
    (tmp_path / "secret.sh").write_text("echo out of reach\n")
    dag = make_dag(tmp_path / "dags", template_searchpath=[str(tmp_path / "shared")])
    c = context_for(dag)
    op = Op(dag, bash_command="run.sh")
    render_template_fields(op, c)
    # Jinja drops a template's last newline (keep_trailing_newline is off, as in Airflow)
    assert op.bash_command == "echo 2018-01-01 events"
    op = Op(dag, bash_command="common.sh", args=["run.sh", "literal.txt"])
    render_template_fields(op, c)
    assert op.bash_command == "echo 2018-01-01 events\necho shared"
    assert op.args == ["echo 2018-01-01 events", "literal.txt"]
    # a trailing space makes a command that ends in .sh a command, as in Airflow
    op = Op(dag, bash_command="bash run.sh ")
    render_template_fields(op, c)
    assert op.bash_command == "bash run.sh "
    for name in ("missing.sh", "../secret.sh", str(tmp_path / "secret.sh")):
        with pytest.raises(jinja2.TemplateNotFound):
            render_template_fields(Op(dag, bash_command=name), c)
    # as Airflow does when it parses the file: the field holds the file's text
    op = Op(dag, bash_command="run.sh", args=["common.sh", 7])
    resolve_template_files(op)
    assert op.bash_command == "echo {{ ds }} {{ params.table }}\n"
    assert op.args == ["{% include 'run.sh' %}\necho shared\n", 7]


def test_native_rendering_and_user_macros_and_filters(tmp_path):
    dag = make_dag(tmp_path, render_template_as_native_obj=True,
                   user_defined_macros={"project": "weir", "double": lambda x: 2 * x},
                   user_defined_filters={"shout": lambda s: s.upper() + "!"})
    env = get_template_env(dag)
    c = context_for(dag, conf={"n": 4})
    assert render_template("{{ [params.n, double(params.n)] }}", c, env) == [4, 8]
    assert render_template("{{ params.n }}", c, env) == 4
    assert render_template("{{ project | shout }} {{ ds }}", c, env) == "WEIR! 2018-01-01"
    assert render_template("{{ logical_date | ds_nodash }}", c, env) == 20180101
    # a sandboxed environment all the same when asked (Airflow's force_sandboxed)
    sandboxed = get_template_env(dag, force_sandboxed=True)
    assert render_template("{{ params.n }}", c, sandboxed) == "4"
    assert render_template("{{ double(2) }}", c, sandboxed) == "4"
    # without a DAG: a bare sandboxed environment with Airflow's filters
    bare = get_template_env(None)
    x = pendulum.datetime(2020, 2, 2)
    assert render_template("{{ x | ds }}", {"x": x}, bare) == "2020-02-02"


def test_the_sandbox_keeps_dunders_out_but_lets_private_names_in(tmp_path):
    dag = make_dag(tmp_path)
    env = get_template_env(dag)
    obj = types.SimpleNamespace(_private="p")
    assert render_template("{{ obj._private }}", {"obj": obj}, env) == "p"
    with pytest.raises(jinja2.exceptions.SecurityError):
        render_template("{{ obj.__class__.__mro__ }}", {"obj": obj}, env)


def test_callables_and_resolvable_values(tmp_path):
    dag = make_dag(tmp_path)
    seen = {}

    def field(context, jinja_env):
        seen["ds"] = context["ds"]
        return "called"

    class XComArgLike:
        def iter_references(self):
            return iter(())

        def resolve(self, context):
            return "resolved " + context["ds"]

    op = Op(dag, bash_command=field, args=[XComArgLike()])
    render_template_fields(op, context_for(dag))
    assert op.bash_command == "called" and seen == {"ds": "2018-01-01"}
    assert op.args == ["resolved 2018-01-01"]


def test_a_cycle_of_nested_objects_is_rendered_once(tmp_path):
    dag = make_dag(tmp_path)
    a, b = Inner("{{ ds }}"), Inner("{{ ds_nodash }}")
    a.template_fields = ["path", "other"]
    b.template_fields = ["path", "other"]
    a.other, b.other = b, a
    op = Op(dag, nested=a)
    render_template_fields(op, context_for(dag))
    assert (a.path, b.path) == ("2018-01-01", "20180101")
