"""Corpus, the second audit: what teams' DAG files do beyond the examples (doc_md naming a
.md file beside the DAG, render_template_as_native_obj, a list of callbacks in
default_args, expand_kwargs over a task's list of dicts, .map() with a lambda, a task
group without its prefix that returns a value, a decorated branch joined under
none_failed_min_one_success, the old helpers' chain with a Label, a variable and a
connection set in the server's environment under Airflow's names, AIRFLOW_VAR_* and
AIRFLOW_CONN_*, the latter read through Connection.get_connection_from_secrets; Params
with minItems, uniqueItems, multipleOf and the trigger form's format "multiline"; a plain
BashOperator's last line pulled by a task under all_done; ti.log_url in a callback)."""
import pendulum

from airflow.decorators import dag, task, task_group
from airflow.models import Variable
from airflow.models.param import Param
from airflow.models.connection import Connection
from airflow.operators.bash import BashOperator
from airflow.operators.empty import EmptyOperator
from airflow.operators.python import PythonOperator
from airflow.utils.edgemodifier import Label
from airflow.utils.helpers import chain
from airflow.utils.trigger_rule import TriggerRule

SEEN = []


def said_ok(context):
    ti = context["ti"]
    print("first callback: %s ok, log at %s" % (ti.task_id, ti.log_url))


def said_again(context):
    print("second callback: %s ok" % context["ti"].task_id)


def kind_of(value, pair):
    return [type(value).__name__, type(pair).__name__, pair]


@dag(schedule=None, start_date=pendulum.datetime(2024, 1, 1, tz="UTC"), catchup=False,
     doc_md="audit_notes.md", render_template_as_native_obj=True, tags=["corpus"],
     params={"n": 3,
             "tags": Param(["a"], type="array", minItems=1, uniqueItems=True),
             "step": Param(10, type="integer", multipleOf=5),
             "note": Param("line one\nline two", type=["null", "string"], format="multiline",
                           description="the form shows a text area")},
     default_args={"on_success_callback": [said_ok, said_again]})
def corpus_audit_more():
    native = PythonOperator(task_id="native", python_callable=kind_of,
                            op_args=["{{ params.n }}", "{{ [params.n, params.n * 2] }}"])

    @task
    def pairs():
        return [{"x": 1, "y": 10}, {"x": 2, "y": 20}]

    @task
    def add(x, y):
        return x + y

    @task
    def numbers():
        return [1, 2, 3]

    @task
    def total(values):
        return sum(values)

    added = add.expand_kwargs(pairs())
    doubled = numbers().map(lambda v: v * 2)
    shifted = add.override(task_id="shifted").partial(y=100).expand(x=doubled)

    @task_group(prefix_group_id=False, default_args={"retries": 2})
    def unprefixed():
        @task
        def inner():
            return 5

        return inner()

    @task
    def plus_one(v):
        return v + 1

    @task.branch
    def choose():
        return "chosen"

    chosen = EmptyOperator(task_id="chosen")
    passed = EmptyOperator(task_id="passed")
    join = EmptyOperator(task_id="join",
                         trigger_rule=TriggerRule.NONE_FAILED_MIN_ONE_SUCCESS)
    chain(choose(), [Label("picked"), Label("not picked")], [chosen, passed], join)
    [total(added), total.override(task_id="total_shifted")(shifted)] >> native
    plus_one(unprefixed()) >> join

    @task
    def from_env():
        db = Connection.get_connection_from_secrets("audit_db")
        return [Variable.get("audit_colour"), Variable.get("audit_cfg", deserialize_json=True),
                Variable.get("audit_none", default_var="dflt"), db.host, db.port]

    from_env()

    @task(trigger_rule="all_done")
    def after_all(ti=None):
        return ti.xcom_pull(task_ids="last_word")

    BashOperator(task_id="last_word", bash_command="echo first; echo last") >> after_all()


corpus_audit_more()


def said_failed(context):
    print("failure callback: %s, %s" % (context["ti"].task_id, context["exception"]))


@dag(schedule=None, start_date=pendulum.datetime(2024, 1, 1, tz="UTC"), catchup=False,
     tags=["corpus"], default_args={"on_success_callback": said_ok,
                                    "on_failure_callback": said_failed})
def corpus_audit_branch():
    """A branch that names a task that is not right below it fails in its execute, as
    Airflow's: its failure callback runs, not its success one."""

    @task.branch
    def wrong_way():
        return "elsewhere"

    wrong_way() >> EmptyOperator(task_id="below")
    EmptyOperator(task_id="elsewhere")


corpus_audit_branch()
