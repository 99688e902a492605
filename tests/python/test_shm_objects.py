"""Put objects in shared memory (weir/remote/shm.py): the segment's layout read back, a
numpy array read from the mapping without a copy and read-only, bad segments refused with
what was wrong, the owner's count removing the file with the last ref, the store's size,
segments of ended programs swept; the nested calls' new frame kinds."""

import os
import pickle
import tempfile

import pytest

from weir.remote import shm
from weir.worker import warm


@pytest.fixture
def shm_dir(monkeypatch):
    d = tempfile.mkdtemp(prefix="weir-shm-test-")
    monkeypatch.setattr(shm, "SHM_DIR", d)
    monkeypatch.setattr(shm, "_limit", None)
    monkeypatch.delenv("WEIR_OBJECT_STORE_MB", raising=False)
    yield d
    for n in os.listdir(d):
        os.unlink(os.path.join(d, n))
    os.rmdir(d)


def test_the_layout_reads_back_buffers_aligned():
    bufs = [memoryview(b"a" * 10), memoryview(b"bb" * 100)]
    head, offs, size = shm.layout(b"PICKLE", bufs)
    assert all(o % shm.ALIGN == 0 for o in offs)
    seg = bytearray(size)
    seg[:len(head) + 6] = head + b"PICKLE"
    for o, b in zip(offs, bufs):
        seg[o:o + b.nbytes] = b
    data, got = shm.parse(memoryview(bytes(seg)))
    assert bytes(data) == b"PICKLE"
    assert [bytes(b) for b in got] == [bytes(b) for b in bufs]


def test_bad_segments_are_refused_with_what_was_wrong():
    with pytest.raises(shm.ShmFormatError, match="shorter than its head"):
        shm.parse(memoryview(b"WEIR"))
    with pytest.raises(shm.ShmFormatError, match="not a weir object"):
        shm.parse(memoryview(shm.HEAD.pack(b"NOTWEIR!", 0, 0)))
    with pytest.raises(shm.ShmFormatError, match="pickle runs past"):
        shm.parse(memoryview(shm.HEAD.pack(shm.MAGIC, 0, 100)))
    bad = shm.HEAD.pack(shm.MAGIC, 1, 0) + shm.SPAN.pack(0, 5)
    with pytest.raises(shm.ShmFormatError, match="buffer 0 runs outside"):
        shm.parse(memoryview(bad))


def test_a_numpy_array_is_read_from_the_mapping_and_the_last_ref_removes_it(shm_dir):
    np = pytest.importorskip("numpy")
    arr = np.arange(100000, dtype=np.float64)
    ref = shm.put(arr, "t")
    assert ref is not None and os.path.exists(ref.path)
    assert os.stat(ref.path).st_mode & 0o777 == 0o600
    got = ref.value()
    assert (got == arr).all() and not got.flags.writeable
    # its data lies in the file's mapping: the array's base is the mapping's view
    assert got.base is not None and not got.flags.owndata
    # a copy of the ref (unpickled in this process) keeps the segment
    again = pickle.loads(pickle.dumps(ref))
    path = ref.path
    del ref
    assert os.path.exists(path)
    del again
    assert not os.path.exists(path)
    assert shm.used() == 0


def test_past_the_store_size_put_says_no(shm_dir, monkeypatch):
    monkeypatch.setenv("WEIR_OBJECT_STORE_MB", "0.001")
    assert shm.put(b"x" * 100, "t") is not None
    assert shm.put(b"y" * 5000, "t") is None  # the caller spills it
    monkeypatch.setenv("WEIR_OBJECT_STORE_MB", "lots")
    with pytest.raises(ValueError, match="WEIR_OBJECT_STORE_MB: expected a number"):
        shm.store_limit()


def test_segments_of_ended_programs_are_swept(shm_dir, tmp_path):
    (tmp_path / "weir-warm-live").mkdir()
    for name in ("weir-obj-live-1-1", "weir-obj-dead-1-1", "other"):
        (open(os.path.join(shm_dir, name), "w")).close()
    assert shm.sweep(str(tmp_path)) == 1
    assert sorted(os.listdir(shm_dir)) == ["other", "weir-obj-live-1-1"]


def test_adopt_takes_only_the_programs_own_segments(shm_dir):
    path = os.path.join(shm_dir, "weir-obj-mine-5-1")
    shm.write_segment(path, pickle.dumps(1), [])
    with pytest.raises(ValueError, match="not a segment of this program"):
        shm.adopt(path, 10, "other")
    with pytest.raises(ValueError, match="not a segment of this program"):
        shm.adopt("/etc/passwd", 10, "mine")
    ref = shm.adopt(path, os.path.getsize(path), "mine")
    assert ref.value() == 1
    del ref
    assert not os.path.exists(path)


def test_the_nested_calls_frames_encode_and_read_back():
    frames = [(k, 3, b"body") for k in (warm.SUBMIT, warm.BLOCKED, warm.UNBLOCKED, warm.REF,
                                         warm.FETCH, warm.OWN)]
    data = b"".join(warm.encode(*f) for f in frames)
    assert warm.FrameReader().feed(data) == frames
