"""The node's agent (`weir agent`) and its shims: a task costs one fork, and nothing is lost or
run twice whichever of server, agent and shim is killed with -9 (docs/internals/launch.md,
"The agent").  Each task of the kill tests appends one line to its own file: the count of
lines is the count of runs."""

import json
import os
import re
import signal
import subprocess

import pytest

from cgroup_paths import cgroups  # noqa: F401  (the fixture)
from cgroup_paths import agent_server, agent_status, alive, cgroup_v1, group_parents, groups_on
from conftest import TASK_PY, WEIR_BIN, cli_describe, spec, wait_for
from dagtest import Dags, dag_config


def lines(path):
    try:
        return path.read_text().splitlines()
    except FileNotFoundError:
        return []


def test_command_without_shell_syntax_is_the_shims_child(make_server, tmp_path):
    srv = agent_server(make_server)
    (tmp_path / "ppid.py").write_text(
        "import os, time\nprint('PPID', os.getppid(), flush=True)\ntime.sleep(60)\n")
    job = srv.submit(spec({"worker": {"command": "%s ppid.py" % TASK_PY}}, name="direct",
                          src_dir=str(tmp_path)))
    srv.wait_running(job["id"])
    log = wait_for(lambda: "PPID" in srv.log(job["id"]) and srv.log(job["id"]), 30,
                   "the task's PPID line")
    ppid = int(re.search(r"PPID (\d+)", log).group(1))
    st = wait_for(lambda: (lambda s: s if s and s["tasks"] else None)(agent_status(srv)), 30,
                  "the agent's status")
    key = "%d.worker.0.1" % job["id"]
    assert key in st["tasks"], st
    shim_pid, program_pid, state = st["tasks"][key]
    assert ppid == shim_pid, (ppid, st)
    # no shell between: the program's own parent is the shim, a fork of the agent
    with open("/proc/%d/comm" % ppid) as f:
        assert f.read().strip() == "weir-shim"
    with open("/proc/%d/stat" % ppid) as f:
        assert int(f.read().rsplit(")", 1)[1].split()[1]) == st["agent_pid"]
    # the JSON form says the same, with the agent's resident size
    r = subprocess.run([WEIR_BIN, "agent", "status", "--json", "--home", str(srv.home)],
                       capture_output=True, text=True, timeout=30)
    assert r.returncode == 0, r.stderr
    m = json.loads(r.stdout)
    assert m["agent_pid"] == st["agent_pid"] and m["server"] is True and m["rss_kb"] > 0, m
    mine = [t for t in m["tasks"] if t["key"] == key]
    assert mine and mine[0]["shim_pid"] == shim_pid and mine[0]["pid"] == program_pid, m
    assert srv.api("DELETE", "/api/v1/jobs/%s" % job["id"])[0] == 202
    assert srv.wait_job(job["id"], timeout=60)["state"] == "killed"


def test_shell_syntax_still_goes_through_the_shell(make_server):
    srv = agent_server(make_server)
    job = srv.submit(spec({"worker": {"command": "X=two; echo \"one $X\" | tr a-z A-Z"}},
                          name="shell"))
    job = srv.wait_job(job["id"], timeout=60)
    assert job["state"] == "succeeded", job
    assert "ONE TWO" in srv.log(job["id"])


def test_missing_program_is_reported_in_the_os_words(make_server):
    srv = agent_server(make_server)
    job = srv.submit(spec({"worker": {"command": "no-such-program-here --flag"}},
                          name="missing"))
    job = srv.wait_job(job["id"], timeout=60)
    (task,) = job["tasks"]
    assert job["state"] == "failed", job
    assert task["exit_code"] == 127, task
    assert "No such file or directory" in task["reason"], task
    assert "no-such-program-here" in task["reason"], task
    assert "cannot run no-such-program-here: No such file or directory" in srv.log(job["id"])


def test_cgroup_limit_still_gives_oomkilled_with_peak(make_server, tmp_path):
    srv = agent_server(make_server)
    (tmp_path / "hog.py").write_text(
        "import time\nchunks = [bytes([1]) * (1 << 20) for _ in range(600)]\n"
        "print('allocated', flush=True)\ntime.sleep(5)\n")
    job = srv.submit(spec({"worker": {"memory": "128m", "command": "%s hog.py" % TASK_PY}},
                          name="oom", src_dir=str(tmp_path)))
    job = srv.wait_job(job["id"], timeout=120)
    (task,) = job["tasks"]
    assert task["state"] == "failed" and "OOMKilled" in task["reason"], task
    assert task["exit_code"] == 137, task
    assert task["peak_memory_bytes"] >= 64 << 20, task


def test_agent_exits_when_idle_without_a_server(make_server):
    srv = agent_server(make_server, WEIR_AGENT_IDLE_S="1")
    job = srv.submit(spec({"worker": {"command": "true"}}, name="once"))
    assert srv.wait_job(job["id"], timeout=60)["state"] == "succeeded"
    # the result acknowledged, the agent holds nothing
    st = wait_for(lambda: (lambda s: s if s and not s["tasks"] else None)(agent_status(srv)),
                  30, "the agent holding nothing")
    srv.kill9()  # no goodbye: the agent notices the server gone and waits out its idle time
    wait_for(lambda: not alive(st["agent_pid"]), 60, "the idle agent to exit")
    # the next server starts a new one
    srv.start()
    job = srv.submit(spec({"worker": {"command": "true"}}, name="again"))
    assert srv.wait_job(job["id"], timeout=60)["state"] == "succeeded"
    st2 = agent_status(srv)
    assert st2 and st2["agent_pid"] != st["agent_pid"], (st, st2)


def test_kill9_of_a_shim_ends_its_task_lost_and_retried(make_server, tmp_path):
    srv = agent_server(make_server)
    side = tmp_path / "runs"
    job = srv.submit(spec({"worker": {"command": "echo run >> %s; sleep 60" % side}},
                          name="shim-lost", restart={"max_restarts": 1}))
    key = "%d.worker.0.1" % job["id"]
    st = wait_for(lambda: (lambda s: s if s and s["tasks"].get(key, (0, 0, ""))[2] == "running"
                           else None)(agent_status(srv)), 60, "the task running")
    wait_for(lambda: lines(side), 30, "the first run's line")
    shim_pid = st["tasks"][key][0]
    os.kill(shim_pid, signal.SIGKILL)

    def second_attempt():
        j = srv.job(job["id"])
        return j if j["attempt"] == 2 and j["state"] == "running" else None
    wait_for(second_attempt, 60, "the second attempt")
    tasks = srv.tasks(job["id"], attempt=1)
    assert tasks[0]["state"] == "lost", tasks
    assert tasks[0].get("cause", "launcher_lost") == "launcher_lost", tasks
    wait_for(lambda: len(lines(side)) == 2, 30, "the second run's line")
    assert srv.api("DELETE", "/api/v1/jobs/%s" % job["id"])[0] == 202
    assert srv.wait_job(job["id"], timeout=60)["state"] == "killed"
    assert lines(side) == ["run", "run"]


FANOUT = """dag_id: wide
params:
  side: "%s"
  items: %s
tasks:
  - task_id: work
    foreach: "{{ params.items }}"
    command: echo {{ item }} >> {{ params.side }}/{{ item }}
  - task_id: join
    depends_on: [work]
    command: echo join >> {{ params.side }}/join
"""


def gang_spec(side, n=4, sleep=3):
    return spec({"worker": {"instances": n, "command":
                            "echo $WEIR_TASK_INDEX >> %s/w$WEIR_TASK_INDEX; sleep %d"
                            % (side, sleep)}}, name="gang")


def test_kill9_of_the_agent_mid_dag_and_gang(make_server, tmp_path):
    srv = make_server(config=dag_config(), start=False)
    d = Dags(srv, tmp_path)
    items = ["i%03d" % i for i in range(200)]
    d.write("wide.yaml", FANOUT % (d.side, json.dumps(items)))
    srv.start()
    d.wait_dag("wide")
    gang_side = tmp_path / "gang"
    gang_side.mkdir()
    job = srv.submit(gang_spec(gang_side, sleep=4))
    d.trigger("wide", run_id="through")
    srv.wait_running(job["id"])

    # kill the agent once part of the fan-out has run and the gang is running
    wait_for(lambda: len([p for p in d.side.iterdir() if p.name.startswith("i")]) >= 30, 120,
             "part of the fan-out")
    st = agent_status(srv)
    assert st, "no agent answers"
    os.kill(st["agent_pid"], signal.SIGKILL)

    run = d.wait_run("wide", "through", timeout=300)
    assert run["state"] == "success", (run, srv.log_text())
    job = srv.wait_job(job["id"], timeout=120)
    assert job["state"] == "succeeded", job
    # every task exactly once, and every result recorded
    for it in items:
        assert d.side_lines(it) == [it], (it, d.side_lines(it))
    assert d.side_lines("join") == ["join"]
    tis = d.tis("wide", "through")
    assert all(t["state"] == "success" and t["try_number"] == 1 for t in tis.values()), \
        [t for t in tis.values() if t["state"] != "success" or t["try_number"] != 1]
    for i in range(4):
        assert lines(gang_side / ("w%d" % i)) == [str(i)], i
    assert all(t["state"] == "succeeded" for t in job["tasks"]), job["tasks"]
    st2 = agent_status(srv)
    assert st2 and st2["agent_pid"] != st["agent_pid"], (st, st2)


def test_kill9_of_server_and_agent_together(make_server, tmp_path):
    srv = agent_server(make_server)
    side = tmp_path / "side"
    side.mkdir()
    jobs = [srv.submit(spec({"worker": {"command": "echo %d >> %s/j%d; sleep 4" % (i, side, i)}},
                            name="solo%d" % i)) for i in range(3)]
    gang = srv.submit(gang_spec(side, n=2, sleep=4))
    for j in jobs + [gang]:
        srv.wait_running(j["id"])
    wait_for(lambda: all(lines(side / ("j%d" % i)) for i in range(3)), 60, "the jobs' lines")
    st = agent_status(srv)
    assert st and len(st["tasks"]) == 5, st
    srv.kill9()
    os.kill(st["agent_pid"], signal.SIGKILL)
    # the shims run on without either; the server, restarted, starts an agent that finds
    # them in their journals
    assert all(alive(v[0]) for v in st["tasks"].values()), st
    srv.start()
    for j in jobs + [gang]:
        done = srv.wait_job(j["id"], timeout=120)
        assert done["state"] == "succeeded", done
        assert done["attempt"] == 1, done
    for i in range(3):
        assert lines(side / ("j%d" % i)) == [str(i)]
    for i in range(2):
        assert lines(side / ("w%d" % i)) == [str(i)]


def test_agent_status_without_an_agent_says_so(tmp_path):
    r = subprocess.run([WEIR_BIN, "agent", "status", "--home", str(tmp_path)],
                       capture_output=True, text=True, timeout=30)
    assert r.returncode == 1, cli_describe(r)
    assert "no agent answers" in r.stderr, cli_describe(r)


def test_without_the_agent_each_task_has_a_launcher_process(make_server):
    srv = agent_server(make_server, WEIR_AGENT="0")
    job = srv.submit(spec({"worker": {"instances": 2, "command": "echo $WEIR_TASK_INDEX"}},
                          name="launchers"))
    job = srv.wait_job(job["id"], timeout=60)
    assert job["state"] == "succeeded", job
    assert agent_status(srv) is None
    assert not (srv.home / "agent.sock").exists()


def test_a_gang_on_the_agent_never_registers_over_http(make_server, tmp_path):
    """A local gang is registered by the server itself, each task with a port picked for it and
    the whole cluster in its start: no shim calls the launch routes, and every task's TF_CONFIG
    names the same four addresses, its own among them, on the port it holds."""
    srv = agent_server(make_server)
    (tmp_path / "tf.py").write_text(
        "import json, os, socket\n"
        "c = json.loads(os.environ['TF_CONFIG'])\n"
        "me = c['task']\n"
        "addr = c['cluster'][me['type']][me['index']]\n"
        "host, port = addr.rsplit(':', 1)\n"
        "s = socket.socket()\n"
        "s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)\n"
        "s.bind((host, int(port)))\n"
        "print('CLUSTER', json.dumps(c['cluster'], sort_keys=True), 'BOUND', addr, flush=True)\n")
    cmd = "%s tf.py" % TASK_PY
    job = srv.submit(spec({"chief": {"instances": 1, "command": cmd},
                           "worker": {"instances": 3, "command": cmd}},
                          name="gang4", framework="tensorflow", src_dir=str(tmp_path)))
    job = srv.wait_job(job["id"], timeout=120)
    logs = [srv.log(job["id"], t["role"], t["index"]) for t in job["tasks"]]
    assert job["state"] == "succeeded", (job, logs)
    clusters = set()
    for t, log in zip(job["tasks"], logs):
        m = re.search(r"CLUSTER (.*) BOUND (\S+)", log)
        assert m, log
        clusters.add(m.group(1))
        assert m.group(2) == "127.0.0.1:%d" % t["port"], (t, log)
    assert len(clusters) == 1, clusters
    cluster = json.loads(clusters.pop())
    assert len(cluster["chief"]) == 1 and len(cluster["worker"]) == 3, cluster
    assert len(set(cluster["chief"] + cluster["worker"])) == 4, cluster
    status, _, data = srv.request("GET", "/metrics")
    assert status == 200
    calls = [line for line in data.decode().splitlines()
             if line.startswith("weir_http_requests_total") and "/launch/" in line]
    assert not calls, calls


def memory_groups(srv, job_id, n):
    """The memory cgroup each of the job's n programs printed (`cat /proc/self/cgroup`)."""
    out = []
    for i in range(n):
        m = re.search(r"^\d+:(?:[^:\n]*,)?memory(?:,[^:\n]*)?:(\S+)$|^0::(\S+)$",
                      srv.log(job_id, index=i), re.M)
        out.append((m.group(1) or m.group(2)) if m else None)
    return out


def test_gang_tasks_with_limits_run_in_the_pools_groups(make_server, cgroups):
    # a gang's tasks register over HTTP; with limits each still goes to a spare shim, born
    # in a group made ahead, so that no program waits for a cgroup move at its start.
    # Without cgroups both gangs run all the same, none of their programs in a group of weir's
    srv = agent_server(make_server, cgroups)
    grouped = groups_on(srv)
    gang = spec({"worker": {"instances": 4, "memory": "64m", "command": "cat /proc/self/cgroup"}},
                name="pooled")
    first = srv.wait_job(srv.submit(gang)["id"], timeout=60)
    assert first["state"] == "succeeded", first
    groups = memory_groups(srv, first["id"], 4)
    if grouped:
        assert all(g and "/weir/" in g for g in groups), groups
    else:
        assert not any(g and "/weir/" in g for g in groups), groups
    # the first gang made the pool as large as its burst: the second finds a spare each
    second = srv.wait_job(srv.submit(gang)["id"], timeout=60)
    assert second["state"] == "succeeded", second
    groups = memory_groups(srv, second["id"], 4)
    if grouped:
        assert all(g and re.search(r"/weir/pool-\d+-\d+$", g) for g in groups), groups
        assert len(set(groups)) == 4, groups
    else:
        assert not any(g and "/weir/" in g for g in groups), groups


def test_a_reused_group_counts_only_its_own_task(make_server, tmp_path, cgroups):
    # an ended task's group is taken again by a later spare (cgroup v1): what the earlier task
    # left there (an OOM kill, a peak, page cache it wrote) must not show in the next one's end.
    # Without cgroups the same holds of the fallback (RSS polled): the OOM kill, and each
    # task's own peak, with no group of weir's
    srv = agent_server(make_server, cgroups)
    grouped = groups_on(srv)
    (tmp_path / "hog.py").write_text(
        "import time\nchunks = [bytes([1]) * (1 << 20) for _ in range(600)]\ntime.sleep(5)\n")
    (tmp_path / "cache.py").write_text(
        "with open('big', 'wb') as f:\n"
        "    for _ in range(150):\n        f.write(bytes(1 << 20))\n"
        "print(open('/proc/self/cgroup').read())\n")
    groups, small = [], spec({"worker": {"memory": "512m", "command": "cat /proc/self/cgroup"}},
                             name="small")
    oom = srv.wait_job(srv.submit(spec({"worker": {"memory": "128m",
                                                    "command": "%s hog.py" % TASK_PY}},
                                       name="oom", src_dir=str(tmp_path)))["id"], timeout=120)
    (task,) = oom["tasks"]
    assert "OOMKilled" in task["reason"], task
    cache = srv.wait_job(srv.submit(spec({"worker": {"memory": "512m",
                                                      "command": "%s cache.py" % TASK_PY}},
                                         name="cache", src_dir=str(tmp_path)))["id"], timeout=120)
    assert cache["state"] == "succeeded", (cache, srv.log(cache["id"]))
    groups += memory_groups(srv, cache["id"], 1)
    if grouped:
        assert groups[0] and "/weir/pool-" in groups[0], groups
    else:
        assert not groups[0] or "/weir/" not in groups[0], groups
    for _ in range(5):
        job = srv.wait_job(srv.submit(small)["id"], timeout=60)
        (task,) = job["tasks"]
        assert job["state"] == "succeeded", (job, srv.log(job["id"]))
        assert not task["reason"] or "OOM" not in task["reason"], task
        # the hog's 128 MiB and the 150 MiB of page cache were reset with the group
        assert 0 < task["peak_memory_bytes"] < 64 << 20, task
        groups += memory_groups(srv, job["id"], 1)
    if grouped and cgroup_v1():
        # cgroup v1: seven tasks one after another on a pool of two, so groups come back
        assert len(set(groups)) < len(groups), groups
    elif not grouped:
        assert not any(g and "/weir/" in g for g in groups), groups


def iso_seconds(text):
    import datetime
    return datetime.datetime.fromisoformat(text.replace("Z", "+00:00")).timestamp()


def test_started_held_for_its_exited_loses_neither(make_server):
    # the agent holds a task's "started" a moment so that a short task's "exited" goes in the
    # same write (one store transaction): a long task still shows running with its pid, a
    # short one has both times, in order; a one-task job and a gang's tasks alike
    srv = agent_server(make_server)
    long_job = srv.submit(spec({"worker": {"command": "sleep 60"}}, name="long"))
    srv.wait_running(long_job["id"])
    st = wait_for(lambda: (lambda s: s if s and s["tasks"] else None)(agent_status(srv)), 30,
                  "the agent's status")
    (task,) = srv.job(long_job["id"])["tasks"]
    assert task["state"] == "running" and task["pid"], task
    assert st["tasks"]["%d.worker.0.1" % long_job["id"]][1] == task["pid"], (st, task)
    assert task["started_at"] and not task["ended_at"], task
    for shape in ({"command": "true"}, {"instances": 3, "command": "true"}):
        job = srv.wait_job(srv.submit(spec({"worker": shape}, name="short"))["id"], timeout=60)
        assert job["state"] == "succeeded", job
        for t in job["tasks"]:
            assert t["started_at"] and t["ended_at"], t
            assert iso_seconds(t["started_at"]) <= iso_seconds(t["ended_at"]), t
            assert t["pid"] and t["exit_code"] == 0, t
    assert srv.api("DELETE", "/api/v1/jobs/%s" % long_job["id"])[0] == 202
    assert srv.wait_job(long_job["id"], timeout=60)["state"] == "killed"


def test_groups_of_an_agent_killed_with_its_server_are_removed(make_server):
    # an agent killed after its server is a zombie until init reaps it (a second, here): the
    # next agent, started at once, must not take it for alive and leave its groups for good;
    # what it cannot remove at its start it removes at its exit
    srv = agent_server(make_server)
    if not groups_on(srv):
        pytest.skip("no writable cgroup on this host: no groups to leave")
    (parent,) = group_parents(srv)[:1]
    # two bursts of 4: the pool grows to 4 spares, and stays full
    for _ in range(2):
        warm = srv.submit(spec({"worker": {"instances": 4, "command": "true", "memory": "64m"}},
                               name="warm"))
        assert srv.wait_job(warm["id"], timeout=60)["state"] == "succeeded"
    # a spare's task killed: the pool full, the spare's group is kept for a later one
    job = srv.submit(spec({"worker": {"command": "sleep 60", "memory": "64m"}}, name="killed"))
    srv.wait_running(job["id"])
    st = wait_for(lambda: (lambda s: s if s and s["tasks"] else None)(agent_status(srv)), 30,
                  "the agent's status")
    agent = st["agent_pid"]
    os.kill(list(st["tasks"].values())[0][0], signal.SIGKILL)
    assert srv.wait_job(job["id"], timeout=60)["state"] == "failed"
    # a task running at the kill: the next agent adopts it, and looks at the pool at once
    job = srv.submit(spec({"worker": {"command": "sleep 2", "memory": "64m"}}, name="adopted"))
    srv.wait_running(job["id"])
    srv.kill9()
    os.kill(agent, signal.SIGKILL)
    srv.start()
    assert srv.wait_job(job["id"], timeout=60)["state"] == "succeeded"
    srv.terminate()

    def groups_of_the_killed():
        return sorted(g for g in os.listdir(parent) if g.startswith("pool-%d-" % agent))
    wait_for(lambda: not groups_of_the_killed(), 30, "the killed agent's groups removed")
