"""Variable.set, .update and .delete from running tasks, as Airflow users write them
(tests/system/test_airflow_variables.py)."""
from datetime import datetime

from airflow import DAG
from airflow.decorators import task
from airflow.models import Variable

with DAG("variables_set", schedule=None, start_date=datetime(2024, 1, 1)):
    @task
    def write():
        Variable.set("counter", 41)
        Variable.update("counter", 42)
        Variable.set("config", {"a": 1}, serialize_json=True)
        # this process reads its own writes back at once
        assert Variable.get("counter") == "42"
        assert Variable.delete("old") == 1
        assert Variable.get("old", default_var="gone") == "gone"
        return "written"

    @task
    def read():
        return [Variable.get("counter"), Variable.get("config", deserialize_json=True),
                Variable.get("old", default_var="gone")]

    @task
    def sneaky():
        key = "not" + "_named"  # a key the file does not name: the server refuses it
        Variable.set(key, "x")

    write() >> read()
    sneaky()
