"""Conformance: every trigger rule below three mixes of upstream states, each rule a task of
a TaskGroup (ids `mixed.all_success`, ...): success + failed + skipped (after the failure); skipped + skipped;
failed + upstream_failed. The states Airflow 2's TriggerRuleDep gives are in the test
(test_airflow_conformance.py, RULES)."""
import pendulum

from airflow import DAG
from airflow.operators.bash import BashOperator
from airflow.operators.empty import EmptyOperator
from airflow.utils.task_group import TaskGroup
from airflow.utils.trigger_rule import TriggerRule

with DAG("conf_trigger_rules", schedule=None, start_date=pendulum.datetime(2024, 1, 1),
         default_args={"retries": 0}, tags=["conformance"]):
    ok = EmptyOperator(task_id="ok")
    bad = BashOperator(task_id="bad", bash_command="exit 1")
    skip_a = BashOperator(task_id="skip_a", bash_command="exit 99")
    skip_b = BashOperator(task_id="skip_b", bash_command="echo skip; exit 99")
    never = EmptyOperator(task_id="never")  # upstream_failed below `bad`
    # skipped once `bad` has failed: all_success below both sees the failure first (Airflow
    # decides all_success as soon as one upstream failed or skipped, whichever comes first)
    skip_late = BashOperator(task_id="skip_late", bash_command="exit 99",
                             trigger_rule="all_done")
    bad >> [never, skip_late]
    for name, upstream in [("mixed", [ok, bad, skip_late]), ("skips", [skip_a, skip_b]),
                           ("fails", [bad, never])]:
        with TaskGroup(group_id=name):
            for rule in TriggerRule:
                if rule.value in ("all_done_setup_success", "dummy"):
                    continue
                upstream >> EmptyOperator(task_id=rule.value, trigger_rule=rule)
