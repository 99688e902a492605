#!/usr/bin/env python3
"""1,000 sensors waiting in mode reschedule, on 2 cores: the server's CPU and memory while
they wait (per sensor and per poke), beside what mode poke costs, where every waiting
sensor holds a slot and a process for its whole wait (Airflow's poke mode does the same
with a worker slot; its docs say reschedule holds a slot only while checking).

    sensors.py [--sensors 1000] [--interval 1] [--window 20] [--poke-sensors 50]

Prints: the server's RSS idle and with the sensors waiting, the growth per sensor, pokes
made in the window, the server's CPU time per poke and its CPU share; then the same DAG
with --poke-sensors in mode poke: the RSS of their processes per sensor, beside weir's
growth per rescheduling sensor (the ratio).
"""

import argparse
import os
import re
import time

from benchlib import BenchServer, REPO  # noqa: F401


def sensor_dag(dag_id, n, folder, interval, mode):
    tasks = "".join(
        "  - task_id: s%d\n    pool: two\n    sensor: {file: {path: go, folder: \"%s\"},"
        " poke_interval: %s, mode: %s}\n" % (i, folder, interval, mode) for i in range(n))
    return "dag_id: %s\nmax_active_tasks: %d\ntasks:\n%s" % (dag_id, n, tasks)


def pokes_of(srv, dag_id, run_id, n):
    status, body = srv.api("GET", "/api/v1/dags/%s/dagRuns/%s/taskInstances?limit=%d"
                           % (dag_id, run_id, n))
    tis = body["task_instances"]
    total = 0
    for t in tis:
        m = re.match(r"poke (\d+):", t.get("reason") or "")
        total += int(m.group(1)) if m else 0
    return tis, total


def rss_of_pids(pids):
    kb = 0
    for pid in pids:
        try:
            with open("/proc/%d/status" % pid) as f:
                kb += next(int(l.split()[1]) for l in f if l.startswith("VmRSS:"))
        except (OSError, StopIteration):
            pass
    return kb


def task_sensor_pids():
    out = []
    for p in os.listdir("/proc"):
        if not p.isdigit():
            continue
        try:
            with open("/proc/%s/cmdline" % p, "rb") as f:
                if b"task-sensor" in f.read():
                    out.append(int(p))
        except OSError:
            pass
    return out


def wait_state(srv, dag_id, run_id, n, state, timeout=300):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        tis, _ = pokes_of(srv, dag_id, run_id, n)
        if sum(t["state"] == state for t in tis) == n:
            return
        time.sleep(0.5)
    raise SystemExit("%s: not every sensor %s after %ss" % (dag_id, state, timeout))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--sensors", type=int, default=1000)
    ap.add_argument("--interval", default="1")
    ap.add_argument("--window", type=float, default=20)
    ap.add_argument("--poke-sensors", type=int, default=50)
    args = ap.parse_args()
    try:
        os.sched_setaffinity(0, set(sorted(os.sched_getaffinity(0))[:2]))  # 2 cores
    except OSError:
        pass
    n = args.sensors
    cfg = ("resources:\n  vcores: %d\n  memory: 64g\n  gpus: 0\npools:\n  two: 2\n"
           % max(64, args.poke_sensors + 2))
    srv = BenchServer(config=cfg, dags={})
    folder = srv.dir / "watched"
    folder.mkdir()
    try:
        time.sleep(1)
        idle = srv.rss_kb()
        (srv.dags / "many.yaml").write_text(sensor_dag("many", n, folder, args.interval,
                                                       "reschedule"))
        while srv.api("GET", "/api/v1/dags/many")[0] != 200:
            time.sleep(0.2)
        _, run = srv.api("POST", "/api/v1/dags/many/dagRuns", {})
        rid = run["dag_run_id"]
        t0 = time.monotonic()
        wait_state(srv, "many", rid, n, "up_for_reschedule")
        print("%d sensors waiting (up_for_reschedule) after %.1f s" % (n, time.monotonic() - t0))
        time.sleep(2)
        _, p0 = pokes_of(srv, "many", rid, n)
        c0, w0, r0 = srv.cpu_s(), time.monotonic(), srv.rss_kb()
        time.sleep(args.window)
        _, p1 = pokes_of(srv, "many", rid, n)
        c1, w1, r1 = srv.cpu_s(), time.monotonic(), srv.rss_kb()
        pokes = p1 - p0
        cpu = c1 - c0
        per_sensor_kb = (r1 - idle) / n
        print("server RSS: idle %.1f MB, %d sensors waiting %.1f MB, after %.0f s more %.1f MB"
              % (idle / 1024, n, r0 / 1024, args.window, r1 / 1024))
        print("  per waiting sensor: %.1f KB; processes held: %d; pool slots held: 0"
              % (per_sensor_kb, len(task_sensor_pids())))
        print("pokes in %.0f s: %d (%.0f/s); server CPU %.2f s (%.1f%% of one core), "
              "%.0f us per poke (the API reads of this benchmark included)"
              % (w1 - w0, pokes, pokes / (w1 - w0), cpu, 100 * cpu / (w1 - w0),
                 1e6 * cpu / max(pokes, 1)))
        (folder / "go").write_text("")
        t0 = time.monotonic()
        while srv.api("GET", "/api/v1/dags/many/dagRuns/%s" % rid)[1]["state"] != "success":
            time.sleep(0.2)
        print("the file appears: %d sensors succeed in %.1f s" % (n, time.monotonic() - t0))
        os.unlink(folder / "go")

        # mode poke: every waiting sensor is a process in a slot
        m = args.poke_sensors
        (srv.dags / "pokers.yaml").write_text(
            sensor_dag("pokers", m, folder, args.interval, "poke").replace("pool: two\n    ", ""))
        while srv.api("GET", "/api/v1/dags/pokers")[0] != 200:
            time.sleep(0.2)
        _, run = srv.api("POST", "/api/v1/dags/pokers/dagRuns", {})
        prid = run["dag_run_id"]
        deadline = time.monotonic() + 120
        while len(task_sensor_pids()) < m and time.monotonic() < deadline:
            time.sleep(0.5)
        time.sleep(2)
        pids = task_sensor_pids()
        proc_kb = rss_of_pids(pids) / max(len(pids), 1)
        print("mode poke: %d sensors, %d task-sensor processes, %.0f KB RSS each (the shim "
              "and launcher around each not counted)" % (m, len(pids), proc_kb))
        print("ratio: a poking sensor's process / a rescheduling sensor's server memory: %.0fx"
              % (proc_kb / max(per_sensor_kb, 0.01)))
        (folder / "go").write_text("")
        while srv.api("GET", "/api/v1/dags/pokers/dagRuns/%s" % prid)[1]["state"] != "success":
            time.sleep(0.2)
    finally:
        srv.stop()


if __name__ == "__main__":
    main()
