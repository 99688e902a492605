"""Workflow runs on a real server: dependency order and outputs, retries with backoff,
execution timeouts, pools and foreach."""

import time

from dagtest import make_dags  # noqa: F401  (the fixture)


def test_diamond_runs_in_order_and_outputs_flow(make_dags):
    d = make_dags(files=["diamond.yaml"])
    d.wait_dag("diamond")
    run = d.trigger("diamond")
    assert run["state"] in ("queued", "running"), run
    run = d.wait_run("diamond", run["dag_run_id"])
    assert run["state"] == "success", run
    order = d.side_lines("order")
    assert len(order) == 4, order
    assert order[0] == "a" and order[-1] == "d", order
    # b and c ran after a, before d, and read a's outputs through {{ outputs.a.KEY }}
    assert sorted(order[1:3]) == ["b-from-a", "c-7"], order
    tis = d.tis("diamond", run["dag_run_id"])
    assert {n: t["state"] for n, t in tis.items()} == dict.fromkeys("abcd", "success"), tis
    assert all(t["try_number"] == 1 for t in tis.values()), tis


def test_flaky_task_retries_with_backoff_then_succeeds(make_dags):
    d = make_dags(files=["flaky.yaml"])
    d.wait_dag("flaky")
    run = d.trigger("flaky")
    run = d.wait_run("flaky", run["dag_run_id"], timeout=90)
    assert run["state"] == "success", run
    ti = d.tis("flaky", run["dag_run_id"])["flaky"]
    assert ti["state"] == "success" and ti["try_number"] == 3, ti
    tries = [float(x) for x in d.side_lines("tries")]
    assert len(tries) == 3, tries
    # retry_delay 1 s doubled each time: at least 1 s, then at least 2 s between tries
    assert tries[1] - tries[0] >= 0.9, tries
    assert tries[2] - tries[1] >= 1.9, tries
    # every try keeps its own log
    for n in (1, 2, 3):
        assert "try %d of flaky" % n in d.log("flaky", run["dag_run_id"], "flaky", n)


def test_execution_timeout_kills_and_fails_downstream(make_dags):
    d = make_dags(files=["timeout.yaml"])
    d.wait_dag("timeout")
    t0 = time.monotonic()
    run = d.trigger("timeout")
    run = d.wait_run("timeout", run["dag_run_id"], timeout=60)
    assert run["state"] == "failed", run
    assert time.monotonic() - t0 < 60
    tis = d.tis("timeout", run["dag_run_id"])
    assert tis["slow"]["state"] == "failed", tis
    assert tis["after"]["state"] == "upstream_failed", tis
    # killed at its timeout, and a timeout is not retried (docs/dags.md)
    assert d.side_lines("slow") == ["started"], d.side_lines("slow")
    assert tis["slow"]["try_number"] == 1, tis
    assert d.side_lines("after") == []


def test_pool_of_one_serialises_two_tasks(make_dags):
    d = make_dags(pools={"one": 1}, files=["pooled.yaml"])
    d.wait_dag("pooled")
    run = d.trigger("pooled")
    run = d.wait_run("pooled", run["dag_run_id"], timeout=60)
    assert run["state"] == "success", run
    lines = d.side_lines("pool")
    assert len(lines) == 4, lines
    # one task's start and end come before the other's start: they never overlapped
    first = lines[0].split()[1]
    second = "p2" if first == "p1" else "p1"
    assert lines == ["start " + first, "end " + first, "start " + second, "end " + second], lines


def test_foreach_runs_each_item_and_join_waits_for_all(make_dags):
    d = make_dags(files=["fanout.yaml"])
    d.wait_dag("fanout")
    run = d.trigger("fanout")
    run = d.wait_run("fanout", run["dag_run_id"], timeout=60)
    assert run["state"] == "success", run
    tis = d.tis("fanout", run["dag_run_id"])
    assert sorted(tis) == ["join", "work[0]", "work[1]", "work[2]"], tis
    assert all(t["state"] == "success" for t in tis.values()), tis
    lines = d.side_lines("fan")
    assert sorted(lines[:3]) == ["done x", "done y", "done z"], lines
    assert lines[3:] == ["join"], lines
    # the join started only after every instance had ended
    join_start = tis["join"]["start_date"]
    assert all(tis["work[%d]" % i]["end_date"] <= join_start for i in range(3)), tis


def test_foreach_items_from_conf(make_dags):
    d = make_dags(files=["fanout.yaml"])
    d.wait_dag("fanout")
    run = d.trigger("fanout", conf={"items": ["p", "q"]})
    run = d.wait_run("fanout", run["dag_run_id"], timeout=60)
    assert run["state"] == "success", run
    assert sorted(d.side_lines("fan")[:2]) == ["done p", "done q"]
    assert sorted(d.tis("fanout", run["dag_run_id"])) == ["join", "work[0]", "work[1]"]
