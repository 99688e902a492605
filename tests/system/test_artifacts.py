"""Archives are unpacked once per content into the home's cache; src_dir is in the workdir."""

import io
import os
import re
import shutil
import tarfile

import pytest

from conftest import spec, write_venv_zip

READ = ("import os; print('VENV_WRAPPER=' + os.environ.get('VENV_WRAPPER', '')); "
        "print('marker=' + open('venv/marker.txt').read().strip()); "
        "print('data=' + open('data/hello.txt').read().strip()); "
        "print('src=' + open('from_src.txt').read().strip())")


def _make_inputs(tmp_path):
    src = tmp_path / "src"
    src.mkdir()
    (src / "from_src.txt").write_text("source file\n")
    (src / "read.py").write_text(READ + "\n")
    venv = write_venv_zip(tmp_path / "venv.zip", "zip-marker")
    data = tmp_path / "data.tar.gz"
    with tarfile.open(data, "w:gz") as t:
        payload = b"from the tarball\n"
        info = tarfile.TarInfo("hello.txt")
        info.size = len(payload)
        info.mode = 0o644
        t.addfile(info, io.BytesIO(payload))
    return src, venv, data


def _job(src, venv, data, name):
    return spec({"worker": {"instances": 2}}, name=name, src_dir=str(src),
                entry_point="read.py", python="venv/bin/python",
                artifacts=[{"path": str(venv), "name": "venv"},
                           {"path": str(data), "name": "data"}])


def _cache_state(home):
    """{entry: (inode, mtime_ns)} of the unpacked trees in the cache (HOME/cache/<sha256>/;
    locks, memos and temporary entries left out)."""
    cache = home / "cache"
    assert cache.is_dir(), "no cache directory under the home: %r" % os.listdir(home)
    out = {}
    for e in os.scandir(cache):
        if not re.fullmatch(r"[0-9a-f]{64}", e.name):
            continue
        st = e.stat(follow_symlinks=False)
        out[e.name] = (st.st_ino, st.st_mtime_ns)
    return out


def _check_output(server, job):
    assert job["state"] == "succeeded", (job, server.log(job["id"]))
    for i in range(2):
        log = server.log(job["id"], "worker", i)
        for want in ("VENV_WRAPPER=1", "marker=zip-marker", "data=from the tarball",
                     "src=source file"):
            assert want in log, (want, log)


def test_archives_are_unpacked_once_and_shared(server, tmp_path):
    src, venv, data = _make_inputs(tmp_path)
    job = server.wait_job(server.submit(_job(src, venv, data, "first"))["id"], timeout=120)
    _check_output(server, job)
    first = _cache_state(server.home)
    assert len(first) == 2, "expected one cache entry per archive: %r" % first

    # the same content under another path is the same entry: no second unpacking
    other = tmp_path / "elsewhere"
    other.mkdir()
    shutil.copy(venv, other / "venv.zip")
    shutil.copy(data, other / "data.tar.gz")
    job = server.wait_job(server.submit(_job(src, other / "venv.zip", other / "data.tar.gz",
                                             "second"))["id"], timeout=120)
    _check_output(server, job)
    assert _cache_state(server.home) == first, "the second job unpacked again"


def test_different_content_is_a_new_entry(server, tmp_path):
    src, venv, data = _make_inputs(tmp_path)
    job = server.wait_job(server.submit(_job(src, venv, data, "a"))["id"], timeout=120)
    _check_output(server, job)
    before = _cache_state(server.home)
    (tmp_path / "v2").mkdir()
    v2 = write_venv_zip(tmp_path / "v2" / "venv.zip", "another-marker")
    job = server.submit(spec({"worker": {}}, name="b", src_dir=str(src),
                             entry_point="read.py", python="venv/bin/python",
                             artifacts=[{"path": str(v2), "name": "venv"},
                                        {"path": str(data), "name": "data"}]))
    job = server.wait_job(job["id"], timeout=120)
    log = server.log(job["id"])
    assert job["state"] == "succeeded", (job, log)
    assert "marker=another-marker" in log, log
    after = _cache_state(server.home)
    assert len(after) == len(before) + 1, (before, after)


@pytest.mark.skipif(os.geteuid() == 0, reason="root writes through file modes")
def test_unpacked_archive_is_read_only_to_tasks(server, tmp_path):
    src, venv, data = _make_inputs(tmp_path)
    job = server.submit(spec({"worker": {"command":
                                         "echo tamper > venv/marker.txt 2>/dev/null; "
                                         "cat venv/marker.txt"}},
                             name="ro", src_dir=str(src),
                             artifacts=[{"path": str(venv), "name": "venv"}]))
    job = server.wait_job(job["id"], timeout=120)
    assert "zip-marker" in server.log(job["id"]), server.log(job["id"])


def test_bad_archive_fails_the_job_with_a_reason(server, tmp_path):
    src = tmp_path / "src"
    src.mkdir()
    bad = tmp_path / "venv.zip"
    bad.write_bytes(b"this is not a zip file at all")
    job = server.submit(spec({"worker": {"command": "true"}}, name="bad-zip",
                             src_dir=str(src), artifacts=[{"path": str(bad), "name": "venv"}]))
    job = server.wait_job(job["id"], timeout=120)
    assert job["state"] == "failed", job
    assert "venv" in (job["reason"] or "") or any("venv" in (t["reason"] or "")
                                                  for t in job["tasks"]), job
