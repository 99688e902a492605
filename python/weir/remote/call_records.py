"""The calls' records of a program's warm workers (docs/internals/calls.md): a record a
try, noted by the pool as the call moves and sent to the server in batches
(`POST /jobs/{id}/calls`, a request per worker job and at most REPORT_BATCH records) at
least every REPORT_EVERY seconds by a thread of its own.  While the server does not answer
(killed, starting again) the records are kept for the next batch; the last batch, at the
pool's close, waits for the server (remote/patience.py).  The program also keeps the
tries that have ended (the last HISTORY of them, times in microseconds) for ray.timeline()
(chrome_events())."""

import sys
import threading
import time
from typing import Any, Callable, Dict, List, Optional, Set, Tuple

from ..client import Client
from ..errors import ServerUnreachable, WeirError
from .patience import patiently

# the records go to the server at least this often (s), and at most this many a request
REPORT_EVERY = 0.1
REPORT_BATCH = 1000
# the ended tries kept in the program for ray.timeline() (Ray keeps a bounded count too)
HISTORY = 100000


class CallRecords:
    """The records not sent yet, and the thread that sends them."""

    def __init__(self, client: Client, closed: Callable[[], bool]) -> None:
        """client: the session's (record_calls); closed(): whether the pool has closed (a
        batch the server does not take then waits for it)."""
        self.client = client
        self.closed = closed
        # not sent yet: (job, try's id) -> the record (the last note wins)
        self.reports: Dict[Tuple[int, int], Dict[str, Any]] = {}
        # sent while running, not yet sent ended
        self.sent_running: Set[Tuple[int, int]] = set()
        self.lock = threading.Lock()
        self.wake = threading.Event()
        self.warned = False
        self.ended = False
        # (job, try) -> when its first note came (time.time()), until it ends
        self.begun: Dict[Tuple[int, int], float] = {}
        # (job, try) -> (name, tries, state, start, end, error) of the tries that ended
        self.history: Dict[Tuple[int, int], Tuple[str, int, str, float, float,
                                                  Optional[str]]] = {}
        self.thread = threading.Thread(target=self._loop, name="weir-warm-report", daemon=True)
        self.thread.start()

    def note(self, job: int, rec_id: int, name: str, tries: int, state: str,
             error: Optional[str] = None) -> None:
        """The state of a try (`rec_id`) on worker job `job`, for the next batch."""
        t = time.time()
        now = int(t * 1000)
        key = (job, rec_id)
        with self.lock:
            start = self.begun.setdefault(key, t)
            if state != "running":
                del self.begun[key]
                old = self.history.get(key)
                self.history[key] = (name, tries, state, old[3] if old else start, t, error)
                if len(self.history) > HISTORY:
                    del self.history[next(iter(self.history))]
            rec = self.reports.get(key)
            if rec is None:
                rec = self.reports[key] = {"id": rec_id, "name": name[:128],
                                           "started_at": now}
            rec["state"] = state
            rec["tries"] = tries
            if state != "running":
                rec["ended_at"] = now
                if error:
                    rec["error"] = error[:256]
            n = len(self.reports)
        if n >= REPORT_BATCH:
            self.wake.set()

    def chrome_events(self, host: str) -> List[Dict[str, Any]]:
        """The tries that have ended as Chrome's trace events (chrome://tracing,
        Perfetto): one complete event ("X") each, times in microseconds since the epoch,
        a row (tid) per worker job under the node (pid), as ray.timeline() gives them."""
        with self.lock:
            items = list(self.history.items())
        out: List[Dict[str, Any]] = []
        for (job, rec), (name, tries, state, start, end, error) in items:
            args: Dict[str, Any] = {"state": state, "tries": tries, "worker_job": job,
                                    "call": rec}
            if error:
                args["error"] = error
            out.append({"name": name, "cat": "task", "ph": "X",
                        "ts": int(start * 1e6), "dur": max(0, int((end - start) * 1e6)),
                        "pid": "Node %s" % host, "tid": "worker job %d" % job,
                        "args": args})
        out.sort(key=lambda e: (e["ts"], e["tid"]))
        return out

    def unsent(self, job: int, rec_id: int) -> bool:
        """Drops the try's record when the server never saw it (True); False when it was
        sent as running already (the caller says how it ended)."""
        key = (job, rec_id)
        with self.lock:
            dropped = self.reports.pop(key, None) is not None and \
                key not in self.sent_running
            if dropped:  # nor in ray.timeline()
                self.begun.pop(key, None)
            return dropped

    def close(self) -> None:
        """The last batch: once the thread's batch in flight has ended (what the server did
        not take is back in the records), everything left, waiting for the server."""
        self.ended = True
        self.wake.set()
        if self.thread is not threading.current_thread():
            self.thread.join()
        self.flush(final=True)

    def _loop(self) -> None:
        while not (self.ended or self.closed()):
            self.wake.wait(REPORT_EVERY)
            self.wake.clear()
            self.flush()

    def flush(self, final: bool = False) -> None:
        """Sends the records noted so far (final, or once the pool has closed: waiting for
        the server while it does not answer; else kept for the next batch)."""
        with self.lock:
            reports, self.reports = self.reports, {}
            for key, rec in reports.items():
                if rec["state"] == "running":
                    self.sent_running.add(key)
                else:
                    self.sent_running.discard(key)
        by_job: Dict[int, List[Dict[str, Any]]] = {}
        for (job, _), rec in reports.items():
            by_job.setdefault(job, []).append(rec)
        for job, recs in by_job.items():
            for i in range(0, len(recs), REPORT_BATCH):
                batch = recs[i:i + REPORT_BATCH]
                try:
                    try:
                        self.client.record_calls(job, batch)
                    except ServerUnreachable:
                        if not (final or self.closed()):
                            self._keep(job, recs[i:])
                            break
                        patiently("the calls' records",
                                  lambda: self.client.record_calls(job, batch))
                except WeirError as e:
                    if not self.warned:
                        self.warned = True
                        sys.stderr.write("weir: the calls of warm worker job %d were not "
                                         "recorded: %s\n" % (job, e))

    def _keep(self, job: int, recs: List[Dict[str, Any]]) -> None:
        """Records the server did not take go back for the next batch, unless a newer note
        of the same try came meanwhile."""
        with self.lock:
            for rec in recs:
                self.reports.setdefault((job, rec["id"]), rec)
