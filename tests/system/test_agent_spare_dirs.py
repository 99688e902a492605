"""A task's folders made ahead by the agent's spare shims (docs/internals/launch.md, "Folders
made ahead"): each try's work folder and log land at HOME/jobs/ID/ROLE-I.A(.log) whether the
job's folder is new (the spare's folder becomes it) or there already (a retry, a gang's other
tasks); the spares' folders of a gone agent are swept, and none is left once the agent exits.
Without cgroups there are no spares: nothing is made ahead, and all the rest holds the same."""

import os

from cgroup_paths import cgroups  # noqa: F401  (the fixture)
from cgroup_paths import agent_server, groups_on
from conftest import spec, wait_for


def own_folders(srv):
    """The spares' own folders, HOME/jobs/.spares/AGENTPID-PID."""
    d = srv.home / "jobs" / ".spares"
    return {p.name: p for p in d.iterdir()} if d.is_dir() else {}


def spares_of(srv):
    """The folders the spares give (each own folder's `next`, which becomes a job's)."""
    return {k: p / "next" for k, p in own_folders(srv).items() if (p / "next").is_dir()}


def parts(p):
    """A spare's folder's (work folders, logs), each empty; None when it holds anything else:
    its parts are .work and .log, or for a spare back from a task its task's names."""
    try:
        entries = list(p.iterdir())
        dirs = [e for e in entries if e.is_dir() and not any(e.iterdir())]
        logs = [e for e in entries if e.is_file() and e.stat().st_size == 0]
    except OSError:
        return None
    return (dirs, logs) if len(dirs) + len(logs) == len(entries) else None


def two_parts(p):
    """Whether a spare's folder holds its two parts, nothing more."""
    got = parts(p)
    return got is not None and len(got[0]) == 1 and len(got[1]) == 1


def ready_spares(srv, n):
    """The spares' folders once n of them hold their two parts."""
    def ready():
        got = {k: p for k, p in spares_of(srv).items() if two_parts(p)}
        return got if len(got) >= n else None
    return wait_for(ready, 30, "%d spares' folders made ahead" % n)


def test_each_try_lands_in_its_place_and_nothing_is_left(make_server, tmp_path, cgroups):
    srv = agent_server(make_server, cgroups)
    spares = groups_on(srv)  # the pool (and its spares) needs groups to make ahead
    # a spare folder of an agent that is gone (pid 1 is no agent of this home)
    stale = srv.home / "jobs" / ".spares" / "1-2"
    (stale / "next" / ".work").mkdir(parents=True)
    (stale / "next" / ".log").write_text("")
    warm = srv.wait_job(srv.submit(spec({"worker": {"command": "true"}}, name="warm"))["id"])
    assert warm["state"] == "succeeded", warm
    # swept at the agent's first start with limits, spares or not
    wait_for(lambda: not stale.exists(), 30, "the gone agent's spare folder swept")
    if spares:
        before = {os.stat(p).st_ino for p in ready_spares(srv, 2).values()}
    else:
        assert not own_folders(srv), own_folders(srv)  # nothing made ahead

    marker = tmp_path / "marker"
    cmd = "pwd; echo try $WEIR_ATTEMPT; test -e %s || { touch %s; exit 1; }" % (marker, marker)
    job = srv.wait_job(srv.submit(spec({"worker": {"command": cmd}}, name="retried",
                                       restart={"max_restarts": 1, "retry_exit_codes": "1"}))["id"])
    assert job["state"] == "succeeded" and job["attempt"] == 2, job
    jobdir = srv.home / "jobs" / str(job["id"])
    if spares:
        # the first try's spare folder became the job's folder: no inode made at the start
        assert os.stat(jobdir).st_ino in before, (os.stat(jobdir).st_ino, before)
    assert sorted(os.listdir(jobdir)) == ["worker-0.1", "worker-0.1.log", "worker-0.2",
                                          "worker-0.2.log"]
    for attempt in (1, 2):
        out = (jobdir / ("worker-0.%d.log" % attempt)).read_text().splitlines()
        assert out[:2] == [str(jobdir / ("worker-0.%d" % attempt)), "try %d" % attempt], out
        assert (jobdir / ("worker-0.%d" % attempt)).is_dir()

    # a gang of three: one job folder, each task's parts in it
    gang = srv.wait_job(srv.submit(spec({"worker": {"instances": 3, "command": "pwd"}},
                                        name="gang"))["id"])
    assert gang["state"] == "succeeded", gang
    gdir = srv.home / "jobs" / str(gang["id"])
    assert sorted(os.listdir(gdir)) == sorted(
        ["worker-%d.1" % i for i in range(3)] + ["worker-%d.1.log" % i for i in range(3)])
    for i in range(3):
        assert (gdir / ("worker-%d.1.log" % i)).read_text().strip() == str(
            gdir / ("worker-%d.1" % i))
    # while they wait, spares' folders hold nothing but their two parts
    assert spares or not own_folders(srv), own_folders(srv)
    for p in spares_of(srv).values():
        got = parts(p)
        assert got is not None and len(got[0]) <= 1 and len(got[1]) <= 1, (p, os.listdir(p))
    # a clean stop: the agent lets its spares go and exits; none of their folders is left
    srv.terminate()
    wait_for(lambda: not own_folders(srv), 30, "no spare folder left after the agent's exit")
