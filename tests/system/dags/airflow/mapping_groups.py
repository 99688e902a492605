"""A mapped task group, as Airflow users write it (tests/system/test_airflow_mapping.py)."""
from datetime import datetime

from airflow import DAG
from airflow.decorators import task, task_group

with DAG("mapping_groups", schedule=None, start_date=datetime(2024, 1, 1), catchup=False):
    @task
    def cities():
        return ["oslo", "lima", "rome"]

    @task
    def fetch(city, unit):
        return {"city": city, "len": len(city), "unit": unit}

    @task
    def report(data, city):
        # the group's argument and this instance's fetch, the same map index
        assert data["city"] == city, (data, city)
        return "%s:%d%s" % (city, data["len"], data["unit"])

    @task
    def summary(lines):
        return sorted(lines)

    @task_group
    def per_city(city, unit):
        return report(fetch(city, unit), city)

    summary(per_city.partial(unit="c").expand(city=cities()))

    @task
    def square(n):
        return n * n

    @task_group
    def literal(n):
        square(n)

    literal.expand(n=[1, 2, 3, 4])

    @task
    def empty():
        return []

    @task_group
    def never(x):
        square(x)

    never.expand(x=empty())
