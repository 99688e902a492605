"""Mapping over several tasks' XComs and over a mapped task's XComs, as Airflow users
write it (tests/system/test_airflow_mapping.py)."""
from datetime import datetime

from airflow import DAG
from airflow.decorators import task

with DAG("mapping_more", schedule=None, start_date=datetime(2024, 1, 1), catchup=False):
    @task
    def letters():
        return ["a", "b"]

    @task
    def nums():
        return [1, 2, 3]

    @task
    def nothing():
        return []

    @task
    def combine(l, n):
        return "%s%d" % (l, n)

    @task
    def tag(l, k, n, sep):
        return sep.join([l, str(k), str(n)])

    @task
    def double(x):
        return 2 * x

    @task
    def plus_one(y):
        return y + 1

    @task
    def odd_only(x):
        return x if x % 2 else None

    @task
    def times_ten(v):
        return 10 * v

    @task
    def total(values):
        return sum(values)

    @task
    def never(a, b):
        return "never"

    ls, ns = letters(), nums()
    # two upstream tasks' lists: their cross product, in Airflow's order
    combine.expand(l=ls, n=ns)
    # and a literal list between them
    tag.partial(sep="-").expand(l=ls, k=[10, 20], n=ns.map(lambda n: n * 100))
    # over a mapped task's values: one instance per upstream instance
    total(plus_one.expand(y=double.expand(x=ns)))
    # an instance that returned None pushed nothing: no instance for it below
    times_ten.expand(v=odd_only.expand(x=ns))
    # one empty list: nothing to run, the task is skipped
    never.expand(a=nothing(), b=ls)
