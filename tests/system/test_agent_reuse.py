"""A shim goes back to the agent's pool after its task (docs/internals/launch.md, "A shim
serves again"): tasks one after another run on fewer shims than tasks, each program's signal
state (ignored, blocked) is what a fresh shim's program had, and every result is recorded."""

import re

from cgroup_paths import cgroups  # noqa: F401  (the fixture)
from cgroup_paths import agent_server, cgroup_v1, groups_on
from conftest import spec


def test_shims_serve_again_with_a_fresh_shims_signal_state(make_server, cgroups):
    # without pool groups on cgroup v1 (no cgroup, or v2) no shim comes back: each task has
    # a shim of its own, and its program's signal state is the same all the same
    srv = agent_server(make_server, cgroups)
    grouped = groups_on(srv)
    cmd = "echo PPID $PPID; grep -E '^Sig(Ign|Blk)' /proc/self/status; grep memory /proc/self/cgroup"
    seen = []
    for i in range(8):
        job = srv.wait_job(srv.submit(spec({"worker": {"command": cmd}}, name="r%d" % i))["id"])
        assert job["state"] == "succeeded", job
        log = srv.log(job["id"])
        ppid = int(re.search(r"PPID (\d+)", log).group(1))
        sig = re.findall(r"^Sig(?:Ign|Blk):\s+\S+$", log, re.M)
        group = re.search(r"memory:(\S+)", log)
        seen.append((ppid, sig, group.group(1) if group else ""))
    # the first ran on a shim forked fresh (no spare yet): the others' programs see the same
    for ppid, sig, _ in seen[1:]:
        assert sig == seen[0][1], seen
    if grouped and cgroup_v1():
        assert any("/weir/pool-" in g for _, _, g in seen), seen
        assert len({ppid for ppid, _, _ in seen[1:]}) < len(seen) - 1, seen
    else:
        if not grouped:
            assert not any("/weir/" in g for _, _, g in seen), seen
        assert len({ppid for ppid, _, _ in seen}) == len(seen), seen


def test_a_process_moved_into_the_tasks_group_is_killed_after_it(make_server, cgroups):
    """The shim reports before it sweeps its group when the program left it no child
    (supervise.h, sweep_after): what was moved into the group all the same is killed, after the
    report, as before it.  Without a group of the task's (no cgroup, or no v1 memory controller
    to move a process by) there is nothing to move into: the task runs, and a process of no
    task of weir's is left alone."""
    import subprocess
    srv = agent_server(make_server, cgroups)
    movable = groups_on(srv) and cgroup_v1()
    # a first task, so that the next one finds a spare in a pool group
    warm = srv.wait_job(srv.submit(spec({"worker": {"command": "true"}}, name="warm"))["id"])
    assert warm["state"] == "succeeded", warm
    outsider = subprocess.Popen(["sleep", "300"])
    try:
        cmd = ("g=$(sed -n 's/^[0-9]*:memory://p' /proc/self/cgroup); echo GROUP $g; "
               "echo %d > /sys/fs/cgroup/memory$g/cgroup.procs && echo MOVED" % outsider.pid)
        if not movable:
            cmd = "echo GROUP $(sed -n 's/^[0-9]*:memory://p' /proc/self/cgroup)"
        job = srv.wait_job(srv.submit(spec({"worker": {"command": cmd}}, name="moved"))["id"])
        log = srv.log(job["id"])
        group = re.search(r"GROUP (\S*)", log)
        assert job["state"] == "succeeded", (job, log)
        if movable:
            assert group and "/weir/" in group.group(1) and "MOVED" in log, log
            assert outsider.wait(timeout=30) == -9
        else:
            assert group and "/weir/" not in group.group(1), log
            assert outsider.poll() is None, "a process of no task was killed"
    finally:
        if outsider.poll() is None:
            outsider.kill()
            outsider.wait()
