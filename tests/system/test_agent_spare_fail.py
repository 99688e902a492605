"""A spare shim that dies unused after the agent wrote it a start (docs/internals/launch.md,
"Groups made ahead"): it could not make or join its group, exits AGENT_SPARE_UNPREPARED (123)
with its reason in the agent's log, and the start, its journal blank (the program never
began), is given to another shim: the task runs exactly once and succeeds.  Test builds
only: WEIR_TEST_SPARE_FAIL=FILE fails the spare that creates FILE once a start is in its
pipe; "always" every spare.  Without cgroups there are no spares to fail: every task runs
once on a shim forked fresh, and the hook has nothing to act on."""

from cgroup_paths import cgroups  # noqa: F401  (the fixture)
from cgroup_paths import agent_server, groups_on
from conftest import spec, wait_for


def agent_log(srv):
    p = srv.home / "agent.log"
    return p.read_text(errors="replace") if p.exists() else ""


def run_jobs(srv, tmp_path, n, name):
    for i in range(n):
        out = tmp_path / ("%s-%d.out" % (name, i))
        job = srv.wait_job(srv.submit(spec({"worker": {"command": "echo ran >> %s" % out}},
                                           name="%s%d" % (name, i)))["id"])
        assert job["state"] == "succeeded", job
        assert out.read_text() == "ran\n", out.read_text()  # once, never twice


def test_a_start_given_to_a_dying_spare_runs_once(make_server, tmp_path, cgroups):
    marker = tmp_path / "spare-fail"
    srv = agent_server(make_server, cgroups, WEIR_TEST_SPARE_FAIL=str(marker))
    run_jobs(srv, tmp_path, 1, "warm")
    if not groups_on(srv):
        run_jobs(srv, tmp_path, 4, "job")
        assert not marker.exists(), "a spare without cgroups"
        assert "exits 123 unused" not in agent_log(srv), agent_log(srv)
        assert "without reporting" not in srv.log_text()
        return
    wait_for(marker.exists, 30, "a spare that fails once a start is in its pipe")
    # spares are taken the longest waiting first and come back last: within three
    # tasks one after another, the failing one gets a start
    run_jobs(srv, tmp_path, 4, "job")
    log = wait_for(lambda: "given to a new shim" in agent_log(srv) and agent_log(srv), 10,
                   "the restart in the agent's log")
    assert "WEIR_TEST_SPARE_FAIL" in log and "exits 123 unused" in log, log
    assert "before its task began; given to a new shim" in log, log
    assert "without reporting" not in srv.log_text()


def test_every_spare_failing_turns_the_pool_off_and_nothing_is_lost(make_server, tmp_path,
                                                                    cgroups):
    srv = agent_server(make_server, cgroups, WEIR_TEST_SPARE_FAIL="always")
    run_jobs(srv, tmp_path, 1, "warm")
    spares = srv.home / "jobs" / ".spares"
    run_jobs(srv, tmp_path, 5, "job")
    log = agent_log(srv)
    if groups_on(srv):
        assert "spare shims keep failing; no groups made ahead" in log, log
    else:
        # no pool to turn off: nothing was made ahead, nothing failed
        assert not (spares.is_dir() and any(spares.iterdir())), list(spares.iterdir())
        assert "exits 123 unused" not in log and "keep failing" not in log, log
