"""A power cut under a whole server: the store's files lose what was not synced, and the
server, started again on them, recovers.

tests/system/powercut_preload.c, preloaded into the server (LD_PRELOAD: no hook in weir),
follows its store's files below wal_batch.c and, at a write, truncation or sync drawn at
random, leaves them as a disk could have after a power cut and kills the server at once.
Meanwhile jobs are submitted, one after another.  Then the server is started again without
it, and:

- it starts (its store opens and migrates, its recovery runs);
- `PRAGMA integrity_check` says ok;
- the jobs it has are 1..m: a prefix of those it answered for (with synchronous=NORMAL the
  last turns before the cut may be lost, docs/internals/recovery.md, "A power cut");
- a new job runs and succeeds.

- every job it kept ends.  A power cut may lose turns the server had answered for (a job's
  id), but never one whose end the agent's acknowledgement waited on: the agent drops a task's
  result from its journal once acknowledged, so a lost `started`/`exited` would leave the
  task `starting` for ever (docs/internals/recovery.md, "A power cut").

Three cuts, each on the store the last one left.  The seed is printed; WEIR_POWERCUT_SEED
replays it.  The in-process test with hundreds of cuts is tests/unit/store/test_powercut.c.
"""

import os
import random
import shutil
import sqlite3
import subprocess
import time
from pathlib import Path

import pytest

from conftest import DEFAULT_CONFIG, FINAL_STATES, spec

HERE = Path(__file__).resolve().parent
CUTS = 3
# room for the new job beside tasks a cut may leave holding their vcores
CONFIG = DEFAULT_CONFIG.replace("vcores: 16", "vcores: 1000")


def build_preload(tmp_path):
    cc = shutil.which("cc")
    if not cc:
        pytest.skip("no C compiler to build the preloaded library")
    out = tmp_path / "powercut.so"
    subprocess.run([cc, "-shared", "-fPIC", "-O1", "-I", str(HERE.parent / "unit"), "-o",
                    str(out), str(HERE / "powercut_preload.c"), "-ldl"], check=True)
    return str(out)


def submit_until_dead(srv, seconds):
    """Submits jobs until the server dies (or `seconds` pass); the ids it answered."""
    acked = []
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline and srv.proc.poll() is None:
        try:
            status, job = srv.api("POST", "/api/v1/jobs",
                                  spec({"w": {"command": "true"}}, name="cut"), timeout=10)
        except OSError:
            time.sleep(0.05)  # not listening yet, or dying
            continue
        if status == 201:
            acked.append(job["id"])
    return acked


def integrity(home):
    db = sqlite3.connect("file:%s?mode=ro" % (home / "weir.db"), uri=True)
    try:
        return db.execute("PRAGMA integrity_check").fetchone()[0]
    finally:
        db.close()


def test_power_cut_under_the_server(make_server, tmp_path):
    seed = int(os.environ.get("WEIR_POWERCUT_SEED") or random.SystemRandom().randrange(1 << 32))
    print("power cut seed: %d (WEIR_POWERCUT_SEED=%d replays it)" % (seed, seed))
    rng = random.Random(seed)
    lib = build_preload(tmp_path)
    srv = make_server(config=CONFIG, start=False)
    # an AddressSanitizer build wants its runtime first; the preloaded library comes first
    asan = {"ASAN_OPTIONS": (os.environ.get("ASAN_OPTIONS", "") +
                             ":verify_asan_link_order=0").lstrip(":")}
    for cut in range(CUTS):
        at, mode = rng.randrange(1, 400), rng.randrange(4)
        srv.extra_env = dict(asan, LD_PRELOAD=lib, WEIR_POWERCUT_AT=str(at),
                             WEIR_POWERCUT_MODE=str(mode),
                             WEIR_POWERCUT_SEED=str(rng.randrange(1 << 62)))
        srv.start(wait=False)
        acked = submit_until_dead(srv, 60)
        cut_happened = srv.proc.poll() is not None
        srv.kill9()  # when no cut came in time: a kill -9 instead
        assert srv.proc.returncode == -9, srv.log_text()

        srv.extra_env = asan
        srv.start()
        assert integrity(srv.home) == "ok"
        status, body = srv.api("GET", "/api/v1/jobs?limit=0")
        assert status == 200, body
        ids = sorted(j["id"] for j in body["jobs"])
        assert ids == list(range(1, len(ids) + 1)), ids
        lost = [i for i in acked if i > len(ids)]
        print("cut %d at event %d (disk mode %d; %s): %d jobs answered, %d kept, %d lost"
              % (cut, at, mode, "cut" if cut_happened else "no cut: kill -9", len(acked),
                 len(ids), len(lost)))
        job = srv.submit(spec({"w": {"command": "true"}}, name="after"))
        assert srv.wait_job(job["id"])["state"] == "succeeded"
        # the jobs end (each is `true`); the bound is only there so that one that never
        # does fails the test rather than hanging it
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and unended(srv, ids):
            time.sleep(0.2)
        left = unended(srv, ids)
        assert not left, "cut %d: jobs that never end after the restart: %s\n%s" % (
            cut, ", ".join("%d %s, tasks %s" % (j["id"], j["state"], "/".join(
                t["state"] for t in j["tasks"])) for j in left), srv.log_text())
        srv.terminate()


def unended(srv, ids):
    return [j for j in (srv.job(i) for i in ids) if j["state"] not in FINAL_STATES]


def test_power_cut_right_after_an_acknowledgement(make_server, tmp_path):
    """The power goes right after the server acknowledged a task's exit to its agent (which
    then drops the result from its journal), and the disk keeps only what was synced: the
    exit was synced before the acknowledgement left, so the job still ends, as it did."""
    lib = build_preload(tmp_path)
    srv = make_server(config=CONFIG)
    go = tmp_path / "go"
    job = srv.submit(spec({"w": {"command": "while [ ! -e %s ]; do sleep 0.05; done" % go}},
                          name="acked"))
    srv.wait_running(job["id"])
    # a clean stop syncs everything (a checkpoint); the task runs on under the agent
    srv.terminate()
    asan = {"ASAN_OPTIONS": (os.environ.get("ASAN_OPTIONS", "") +
                             ":verify_asan_link_order=0").lstrip(":")}
    srv.extra_env = dict(asan, LD_PRELOAD=lib, WEIR_POWERCUT_AFTER_ACK="1",
                         WEIR_POWERCUT_MODE="0")  # the disk keeps nothing unsynced
    srv.start()
    go.touch()  # the task exits; the server records it, acknowledges it, and the power goes
    srv.proc.wait(timeout=60)
    assert srv.proc.returncode == -9, srv.log_text()

    srv.extra_env = asan
    srv.start()
    assert integrity(srv.home) == "ok"
    end = srv.wait_job(job["id"], timeout=60)
    assert end["state"] == "succeeded", "%s, exit %s: %s" % (end["state"], end["exit_code"],
                                                            end["reason"])
