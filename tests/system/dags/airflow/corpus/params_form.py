"""Corpus: a trigger form's Params as example_params_ui_tutorial (titles, HTML descriptions,
enum with values_display, examples, arrays with items, date and time formats, lengths and
ranges, sections, a const, a custom form; the DAG id from the file's name; the conf read
from ti.dag_run)."""
from __future__ import annotations

import datetime
import json
from pathlib import Path
from typing import TYPE_CHECKING

from airflow import DAG
from airflow.decorators import task
from airflow.exceptions import AirflowSkipException
from airflow.models.param import Param

if TYPE_CHECKING:
    from airflow.models.dagrun import DagRun
    from airflow.models.taskinstance import TaskInstance

with DAG(
    dag_id="corpus_" + Path(__file__).stem,
    description=__doc__.partition(".")[0],
    doc_md=__doc__,
    schedule=None,
    start_date=datetime.datetime(2024, 2, 1),
    catchup=False,
    tags=["corpus"],
    params={
        "count": 5,
        "label": "plain text",
        "enabled": True,
        "tags": ["x", "y"],
        "level": Param(3, type="integer", title="Level",
                       description_html="<b>How deep</b> to go"),
        "colour": Param("green", type="string", title="Colour",
                        enum=["red", "green", "blue"],
                        values_display={"red": "Red", "green": "Green", "blue": "Blue"}),
        "hint": Param("b", type="string", examples=["a", "b", "c"]),
        "picks": Param(["a"], "Pick some", type="array", examples=["a", "b", "c"],
                       values_display={"a": "A", "b": "B"}),
        "numbers": Param([1, 2], type="array", items={"type": "number"}),
        "when": Param("2024-02-01T10:00:00+00:00", type="string", format="date-time"),
        "day": Param("2024-02-01", type="string", format="date"),
        "at": Param("10:11:12", type=["string", "null"], format="time"),
        "name": Param("a long enough name", type="string", minLength=5, maxLength=30,
                      section="Checked"),
        "ratio": Param(70, type="number", minimum=10, maximum=100, section="Checked"),
        "extra": Param({"k": "v"}, type=["object", "null"], section="Advanced"),
        "people": Param([{"name": "ann"}], type="array",
                        items={"type": "object", "properties": {"name": {"type": "string"}},
                               "required": ["name"]}, section="Advanced"),
        "fixed": Param("always", const="always"),
        "shade": Param("#00FF00", type="string", custom_html_form="<input name='{name}'>",
                       section="Advanced"),
    },
) as dag:

    @task(task_id="read_conf")
    def read_conf(**kwargs) -> dict:
        ti: TaskInstance = kwargs["ti"]
        dag_run: DagRun = ti.dag_run
        if not dag_run.conf:
            raise AirflowSkipException("triggered without a form")
        print(json.dumps(dag_run.conf, indent=2, sort_keys=True))
        p = kwargs["params"]
        return {"conf": dict(dag_run.conf), "level": p["level"], "fixed": p["fixed"],
                "colour": p["colour"], "ratio": p["ratio"]}

    read_conf()
