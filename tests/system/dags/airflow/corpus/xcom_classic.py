"""Corpus: XComs as example_xcom writes them (a key pushed from a template inside
bash_command, an XComArg put in an f-string of another task's command, pulls by key of a
Bash task's values, `<<` with a list, values compared in Python)."""
import pendulum

from airflow.decorators import task
from airflow.models.dag import DAG
from airflow.models.xcom_arg import XComArg
from airflow.operators.bash import BashOperator

FIRST = [7, 8]
SECOND = {"colour": "teal"}


@task
def push_keyed(ti=None):
    ti.xcom_push(key="from keyed", value=FIRST)


@task
def push_plain():
    return SECOND


def same(got, want):
    if got != want:
        raise ValueError("expected %r, got %r" % (want, got))


@task
def compare(second, ti=None):
    same(ti.xcom_pull(task_ids="push_keyed", key="from keyed"), FIRST)
    same(second, SECOND)
    return "compared"


@task
def from_bash(ti=None):
    return [ti.xcom_pull(key="return_value", task_ids="shell_push"),
            ti.xcom_pull(key="by_hand", task_ids="shell_push")]


with DAG("corpus_xcom_classic", schedule="@once", catchup=False,
         start_date=pendulum.datetime(2024, 1, 1, tz="UTC"), tags=["corpus"]):
    shell_push = BashOperator(
        task_id="shell_push",
        bash_command='echo "starting" && '
        'echo "pushed {{ ti.xcom_push(key="by_hand", value="set by hand") }}" && '
        'echo "returned last"',
    )
    shell_pull = BashOperator(
        task_id="shell_pull",
        bash_command=f'test "{XComArg(shell_push, key="by_hand")}" = "set by hand" && '
        f'echo "got {XComArg(shell_push)}"',
        do_xcom_push=False,
    )
    [shell_pull, from_bash()] << shell_push
    compare(push_plain()) << push_keyed()
