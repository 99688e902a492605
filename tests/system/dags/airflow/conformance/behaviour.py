"""Conformance: what tasks do and how they end, as Airflow 2 documents it: a BashOperator's
last line as its XCom, `skip_on_exit_code` (99, or a list; the old `skip_exit_code`), a non-zero exit failing the try,
`cwd`, `env` with `append_env`, a `.sh` template file beside the DAG file; a custom
operator's `template_ext` `.json` read from `template_searchpath`; retries with a small
retry_delay, `AirflowFailException` using none; `multiple_outputs`; XComs of several task
ids, a pickled value; `@task` with the context as `**kwargs` and get_current_context();
do_xcom_push=False; `Label`, chain and cross_downstream."""
import json
import os
from datetime import date, datetime, timedelta

from airflow.decorators import dag, task
from airflow.exceptions import AirflowException, AirflowFailException
from airflow.models.baseoperator import BaseOperator, chain, cross_downstream
from airflow.operators.bash import BashOperator
from airflow.operators.empty import EmptyOperator
from airflow.operators.python import get_current_context
from airflow.utils.edgemodifier import Label

HERE = os.path.dirname(os.path.abspath(__file__))


class PostJson(BaseOperator):
    template_fields = ("payload",)
    template_ext = (".json",)

    def __init__(self, payload, **kwargs):
        super().__init__(**kwargs)
        self.payload = payload

    def execute(self, context):
        return json.loads(self.payload)


@dag(schedule=None, start_date=datetime(2024, 1, 1), catchup=False,
     template_searchpath=[os.path.join(HERE, "templates")], params={"n": 5},
     default_args={"retries": 0, "retry_delay": timedelta(seconds=0)}, tags=["conformance"])
def conf_behaviour():
    last_line = BashOperator(task_id="last_line", bash_command="echo first; echo second")
    skip99 = BashOperator(task_id="skip99", bash_command="exit 99")
    skip3 = BashOperator(task_id="skip3", bash_command="exit 3", skip_on_exit_code=[3, 4])
    skip_old = BashOperator(task_id="skip_old", bash_command="exit 5", skip_exit_code=5)
    fails = BashOperator(task_id="fails", bash_command="echo oops; exit 2",
                         email="ops@example.com; dev@example.com", email_on_retry=False)
    in_cwd = BashOperator(task_id="in_cwd", bash_command="pwd", cwd="/")
    env_added = BashOperator(task_id="env_added", bash_command='echo "$ADDED:${HOME:+home}"',
                             env={"ADDED": "{{ params.n }}"}, append_env=True)
    from_file = BashOperator(task_id="from_file", bash_command="report.sh")
    posted = PostJson(task_id="posted", payload="sub/payload.json")

    @task(retries=1, retry_delay=timedelta(seconds=0))
    def flaky(ti=None):
        if ti.try_number == 1:
            raise AirflowException("first try fails")
        return ti.try_number

    def told(context):
        ti = context["ti"]
        print("callback saw %s of %s, max_tries %d, try %d, %s" % (
            ti.state, ti.task_id, ti.max_tries, ti.try_number, type(context["exception"]).__name__))

    @task(retries=3, on_failure_callback=told)
    def no_retry():
        raise AirflowFailException("no point retrying")

    @task(multiple_outputs=True)
    def split():
        return {"left": 1, "right": [2, 3]}

    @task
    def when():
        return {"at": datetime(2024, 5, 6, 7, 8), "days": {date(2024, 1, 1)}}

    @task
    def gather(left, right, **context):
        ti = context["ti"]
        assert get_current_context()["ti"] is ti
        lines = ti.xcom_pull(task_ids=["last_line", "in_cwd"])
        kept = ti.xcom_pull(task_ids="when")
        assert kept["at"] == datetime(2024, 5, 6, 7, 8) and kept["days"] == {date(2024, 1, 1)}
        assert ti.xcom_pull(task_ids="quiet") is None
        assert ti.xcom_pull(task_ids="split", key="left") == left
        assert ti.xcom_pull(key="right") == [2, 3]  # no task id: the one that pushed it
        assert ti.xcom_pull(key="nobody_pushed", default="d") == "d"
        assert (ti.state, ti.max_tries, ti.pool, ti.queue, ti.next_try_number) == (
            "running", 0, "default_pool", "default", 2)
        assert ti.start_date.tzinfo is not None and ti.hostname and ti.operator
        return [left, right, lines, context["params"]["n"]]

    @task(do_xcom_push=False)
    def quiet():
        return "not kept"

    s = split()
    g = gather(s["left"], s["right"])
    [last_line, in_cwd, when(), quiet()] >> g
    a, b, c, d = (EmptyOperator(task_id=x) for x in "abcd")
    last_line >> Label("then") >> a
    chain(a, [b, c], d)
    cross_downstream([skip99, skip3, skip_old], [EmptyOperator(task_id="after_skip")])
    fails >> EmptyOperator(task_id="after_fail")
    [env_added, from_file, posted, flaky(), no_retry()]


conf_behaviour()
