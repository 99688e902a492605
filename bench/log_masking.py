"""The cost of masking a task's output (issue 12): one task writes MB megabytes to its log
through weir, three ways side by side: straight into the log file (no secrets: the
program's stdout is the file), through the launcher's pipe and masker (the task lists a
connection, so its password and URI are masked), and `cat` of the same bytes into a file
(the floor).  Prints the medians and the ratios.  Figures, not assertions."""

import argparse
import os
import subprocess
import tempfile
import time

from benchlib import BenchServer, median, parse_time


def job_seconds(job):
    return parse_time(job["ended_at"]) - parse_time(job["started_at"])


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--mb", type=int, default=256)
    a = ap.parse_args()
    srv = BenchServer()
    try:
        st, _ = srv.api("POST", "/api/v1/connections",
                        {"connection_id": "wh", "conn_type": "postgres", "host": "db",
                         "login": "etl", "password": "Secret-Pw-123", "schema": "dw"})
        assert st == 200, st
        # lines of output that hold no secret, 1 MiB a block
        cmd = ("yes 'a line of a log that says nothing secret, like most lines do' "
               "| head -c %d" % (a.mb << 20))
        plain, masked, floor = [], [], []
        for _ in range(a.runs):
            for conns, out in (([], plain), (["wh"], masked)):
                job = srv.submit({"name": "log", "framework": "none", "connections": conns,
                                  "roles": {"w": {"instances": 1, "memory": "256m",
                                                  "command": cmd}}})
                job = srv.wait(job["id"])
                assert job["state"] == "succeeded", job
                out.append(job_seconds(job))
            with tempfile.NamedTemporaryFile(dir=srv.dir) as f:
                t = time.monotonic()
                subprocess.run(["sh", "-c", cmd + " | cat > " + f.name], check=True)
                floor.append(time.monotonic() - t)
        mp, mm, mf = median(plain), median(masked), median(floor)
        print("log masking, %d MiB of output, median of %d:" % (a.mb, a.runs))
        print("  straight into the file   %.3f s  (%.0f MiB/s)" % (mp, a.mb / mp))
        print("  pipe + masker            %.3f s  (%.0f MiB/s)" % (mm, a.mb / mm))
        print("  sh | cat > file (floor)  %.3f s  (%.0f MiB/s)" % (mf, a.mb / mf))
        print("  masked / straight: %.2fx; masked / floor: %.2fx" % (mm / mp, mm / mf))
    finally:
        srv.stop()


if __name__ == "__main__":
    main()
