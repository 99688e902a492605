"""Corpus: BranchDayOfWeekOperator as example_branch_day_of_week_operator (every day listed,
so the run always takes the true branch), and Label on the edges as example_branch_labels."""
import pendulum

from airflow.models.dag import DAG
from airflow.operators.empty import EmptyOperator
from airflow.operators.weekday import BranchDayOfWeekOperator
from airflow.utils.edgemodifier import Label
from airflow.utils.weekday import WeekDay

with DAG(dag_id="corpus_day_of_week", start_date=pendulum.datetime(2024, 1, 1, tz="UTC"),
         catchup=False, schedule="@daily", tags=["corpus"]):
    yes = EmptyOperator(task_id="any_day")
    no = EmptyOperator(task_id="no_day")
    which = BranchDayOfWeekOperator(task_id="which_day", follow_task_ids_if_true="any_day",
                                    follow_task_ids_if_false="no_day",
                                    week_day=set(WeekDay), use_task_logical_date=True)
    which >> Label("listed") >> yes
    which >> Label("not listed") >> no
    check = EmptyOperator(task_id="check")
    report = EmptyOperator(task_id="report", trigger_rule="none_failed")
    check >> Label("all good") >> report
