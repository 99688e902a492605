"""Conformance: the values of Airflow 2's context for a manual run of a @daily DAG with the
logical date 2024-05-06T00:00:00+00:00 and the conf {"size": 9}, checked against the values
Airflow documents (templates reference) and computes for such a run: the data interval the
period that ends at the date (Airflow's inference, see below), prev_ds/next_ds equal to ds, the run id and run type of a
REST trigger, params with the conf over them, macros, test_mode False."""
from datetime import datetime, timedelta

from airflow import DAG
from airflow.models.param import Param
from airflow.operators.bash import BashOperator
from airflow.operators.python import PythonOperator

WANT = {
    "ds": "2024-05-06",
    "ds_nodash": "20240506",
    "ts": "2024-05-06T00:00:00+00:00",
    "ts_nodash": "20240506T000000",
    "ts_nodash_with_tz": "20240506T000000+0000",
    "logical_date": "2024-05-06T00:00:00+00:00",
    "execution_date": "2024-05-06T00:00:00+00:00",
    # Airflow infers a manual run's interval as the period that ends at its logical date
    # (2024-05-05 to 05-06), and so does weir for a Python DAG (its `manual_interval`; a YAML
    # DAG's is the period that starts at it: docs/airflow.md)
    "data_interval_start": "2024-05-05T00:00:00+00:00",
    "data_interval_end": "2024-05-06T00:00:00+00:00",
    "prev_ds": "2024-05-06",
    "next_ds": "2024-05-06",
    "prev_ds_nodash": "20240506",
    "next_ds_nodash": "20240506",
    "yesterday_ds": "2024-05-05",
    "tomorrow_ds": "2024-05-07",
    "run_id": "manual__2024-05-06T00:00:00+00:00",
    "task_instance_key_str": "conf_context__check__20240506",
    "params": {"size": 9, "colour": "red"},
    "dag_run.conf": {"size": 9},
    "dag_run.run_type": "manual",
    "dag_run.external_trigger": True,
    "ti.try_number": 1,
    "ti.map_index": -1,
    "ti.task_id": "check",
    "ti.dag_id": "conf_context",
    "task.owner": "data",
    "task.retries": 0,
    "dag.dag_id": "conf_context",
    "test_mode": False,
    "prev_data_interval_start_success": None,
    "prev_start_date_success": None,
    "ds_add": "2024-05-13",
    "ds_format": "06/05/24",
    "macro_datetime": "2024-01-02",
    "macro_timedelta": "2024-05-07",
    "relativedelta": "2024-06-06",
}


def check(ds, ti, params, dag_run, **context):
    macros = context["macros"]
    got = {
        "ds": ds, "ds_nodash": context["ds_nodash"], "ts": context["ts"],
        "ts_nodash": context["ts_nodash"], "ts_nodash_with_tz": context["ts_nodash_with_tz"],
        "logical_date": context["logical_date"].isoformat(),
        "execution_date": context["execution_date"].isoformat(),
        "data_interval_start": context["data_interval_start"].isoformat(),
        "data_interval_end": context["data_interval_end"].isoformat(),
        "prev_ds": context["prev_ds"], "next_ds": context["next_ds"],
        "prev_ds_nodash": context["prev_ds_nodash"], "next_ds_nodash": context["next_ds_nodash"],
        "yesterday_ds": context["yesterday_ds"], "tomorrow_ds": context["tomorrow_ds"],
        "run_id": context["run_id"],
        "task_instance_key_str": context["task_instance_key_str"],
        "params": dict(params), "dag_run.conf": dag_run.conf,
        "dag_run.run_type": str(getattr(dag_run.run_type, "value", dag_run.run_type)),
        "dag_run.external_trigger": dag_run.external_trigger,
        "ti.try_number": ti.try_number, "ti.map_index": ti.map_index,
        "ti.task_id": ti.task_id, "ti.dag_id": ti.dag_id,
        "task.owner": context["task"].owner, "task.retries": context["task"].retries,
        "dag.dag_id": context["dag"].dag_id, "test_mode": context["test_mode"],
        "prev_data_interval_start_success": context["prev_data_interval_start_success"],
        "prev_start_date_success": context["prev_start_date_success"],
        "ds_add": macros.ds_add(ds, 7),
        "ds_format": macros.ds_format(ds, "%Y-%m-%d", "%d/%m/%y"),
        "macro_datetime": (macros.datetime(2024, 1, 1) + macros.timedelta(days=1)).strftime(
            "%Y-%m-%d"),
        "macro_timedelta": (context["logical_date"] + macros.timedelta(days=1)).strftime(
            "%Y-%m-%d"),
        "relativedelta": (context["logical_date"] +
                          macros.dateutil.relativedelta.relativedelta(months=1)).strftime(
            "%Y-%m-%d"),
    }
    wrong = {k: (got.get(k), v) for k, v in WANT.items() if got.get(k) != v}
    if wrong:
        raise ValueError("context values (got, want): %r" % (wrong,))
    assert ti.run_id == dag_run.run_id == context["run_id"]
    assert context["task_instance"] is ti
    assert isinstance(macros.uuid.uuid4().hex, str) and 0 <= macros.random() < 1
    assert macros.time.time() > 0
    return sorted(got)


def templated(first, second, templates_dict=None, **kwargs):
    return [first, second, templates_dict]


with DAG(
    dag_id="conf_context",
    schedule="@daily",
    start_date=datetime(2024, 1, 1),
    end_date=datetime(2024, 12, 31),  # no scheduled run now: the test triggers its own
    catchup=False,
    params={"size": Param(3, type="integer", minimum=1), "colour": "red"},
    default_args={"owner": "data", "retries": 0, "retry_delay": timedelta(seconds=1)},
    user_defined_macros={"shout": lambda s: s.upper() + "!"},
    user_defined_filters={"twice": lambda s: s + s},
    tags=["conformance"],
) as dag:
    first = PythonOperator(task_id="check", python_callable=check)
    rendered = PythonOperator(
        task_id="rendered",
        python_callable=templated,
        op_args=["{{ ds_nodash }}/{{ params.size }}"],
        op_kwargs={"second": "{{ shout(dag.dag_id) }} {{ 'ab' | twice }}"},
        templates_dict={"prev": "{{ prev_ds }}", "key": "{{ task_instance_key_str }}",
                        "interval": "{{ data_interval_start | ds }}",
                        "conf": "{{ dag_run.conf['size'] }} {{ var.value.get('nope', 'dflt') }}",
                        "macro": "{{ macros.ds_add(ds, -1) }} {{ ts_nodash_with_tz }}"},
    )
    shell = BashOperator(
        task_id="shell",
        bash_command="echo \"{{ run_id }} {{ ti.try_number }} {{ params.colour }} $EXTRA\"",
        env={"EXTRA": "{{ ds }}"},
        append_env=True,
    )
    first >> rendered >> shell
