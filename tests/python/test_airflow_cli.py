"""The `airflow` command's parts that need no server (weir/compat/airflow/cli.py): its output
formats, its dates, its flags and their errors."""

import datetime
import io
import json

import pytest

from weir.compat.airflow import cli

ROWS = [{"dag_id": "a", "is_paused": False, "conf": {"k": 1}, "end_date": None},
        {"dag_id": "bb", "is_paused": True, "conf": {}, "end_date": "2024-01-01"}]


def test_table_has_a_header_a_rule_and_aligned_columns():
    lines = cli.render(ROWS, "table").splitlines()
    assert lines == ['dag_id | is_paused | conf     | end_date',
                     '=======+===========+==========+===========',
                     'a      | False     | {"k": 1} | None',
                     'bb     | True      | {}       | 2024-01-01']


def test_plain_json_and_yaml():
    assert cli.render(ROWS, "plain").splitlines()[0].split() == ["dag_id", "is_paused",
                                                                 "conf", "end_date"]
    assert json.loads(cli.render(ROWS, "json")) == ROWS
    assert cli.render(ROWS, "yaml").splitlines() == [
        '- dag_id: "a"', "  is_paused: false", '  conf: {"k": 1}', "  end_date: null",
        '- dag_id: "bb"', "  is_paused: true", "  conf: {}", '  end_date: "2024-01-01"']


def test_no_rows():
    assert cli.render([], "table") == "No data found"
    assert cli.render([], "json") == "[]"
    assert cli.render([], "yaml") == "[]"


def test_dates_are_utc_unless_they_say_otherwise():
    utc = datetime.timezone.utc
    assert cli.parse_date("2024-03-01") == datetime.datetime(2024, 3, 1, tzinfo=utc)
    assert cli.parse_date("2024-03-01T06:00:00Z") == datetime.datetime(2024, 3, 1, 6,
                                                                      tzinfo=utc)
    d = cli.parse_date("2024-03-01T06:00:00+01:00")
    assert d.utcoffset() == datetime.timedelta(hours=1)
    with pytest.raises(cli.CommandError, match="'03/01/2024' is not a date"):
        cli.parse_date("03/01/2024")


def test_flags_as_airflow_takes_them():
    p = cli.build_parser()
    a = p.parse_args(["dags", "trigger", "d", "-c", "{}", "-r", "r1", "-e", "2024-01-01",
                      "-o", "json", "--subdir", "/ignored"])
    assert (a.dag_id, a.conf, a.run_id, a.exec_date, a.output) == ("d", "{}", "r1",
                                                                   "2024-01-01", "json")
    a = p.parse_args(["trigger_dag", "d", "--conf", '{"x": 1}'])
    assert a.dag_id == "d" and a.conf == '{"x": 1}'
    a = p.parse_args(["dags", "list-runs", "-d", "d", "--state", "RUNNING"])
    assert a.dag_id == "d" and a.state == "RUNNING"


def test_bad_conf_is_refused_before_anything_is_sent():
    class NoServer:
        def trigger(self, *a, **k):
            raise AssertionError("nothing may be sent")

    err = io.StringIO()
    rc = cli.main(["dags", "trigger", "d", "-c", "{oops"], out=io.StringIO(), err=err,
                  client=NoServer())  # type: ignore[arg-type]
    assert rc == 1 and "--conf: not JSON" in err.getvalue()


def test_version_needs_no_server():
    out = io.StringIO()
    assert cli.main(["version"], out=out, client=object()) == 0  # type: ignore[arg-type]
    assert out.getvalue().startswith(cli.AIRFLOW_VERSION + " (weir ")
