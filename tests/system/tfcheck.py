"""A task of the TF_CONFIG system test (no TensorFlow needed).

It listens on its own address from TF_CONFIG, connects to every other task's address
(retrying until a deadline), and checks TonY's companion variables.  A tracked task exits 0
once it reached every other task and every other task reached it; an untracked one (ps) keeps
serving until it is killed.
"""

import json
import os
import socket
import sys
import threading
import time

DEADLINE = time.monotonic() + 90


OUT = threading.Lock()


def say(*words):
    """One whole line per call: print() writes its words one by one, and the serving
    thread's lines would mix into the main thread's."""
    with OUT:
        sys.stdout.write(" ".join(str(w) for w in words) + "\n")
        sys.stdout.flush()


def fail(msg):
    say("FAIL: " + msg)
    sys.exit(3)


def main():
    cfg = json.loads(os.environ["TF_CONFIG"])
    cluster, task = cfg["cluster"], cfg["task"]
    me = "%s:%d" % (task["type"], task["index"])
    say("me", me, "TF_CONFIG", json.dumps(cfg, sort_keys=True))

    # TonY's variables agree with TF_CONFIG, and weir's own agree with both
    if os.environ.get("JOB_NAME") != task["type"]:
        fail("JOB_NAME=%r, task type %r" % (os.environ.get("JOB_NAME"), task["type"]))
    if os.environ.get("TASK_INDEX") != str(task["index"]):
        fail("TASK_INDEX=%r, task index %r" % (os.environ.get("TASK_INDEX"), task["index"]))
    if json.loads(os.environ.get("CLUSTER_SPEC", "null")) != cluster:
        fail("CLUSTER_SPEC=%r differs from TF_CONFIG's cluster" % os.environ.get("CLUSTER_SPEC"))
    if not os.environ.get("TASK_NUM", "").isdigit():
        fail("TASK_NUM=%r" % os.environ.get("TASK_NUM"))
    if os.environ.get("WEIR_ROLE") != task["type"] or \
            os.environ.get("WEIR_TASK_INDEX") != str(task["index"]):
        fail("WEIR_ROLE/WEIR_TASK_INDEX disagree with TF_CONFIG")
    expect = json.loads(os.environ["EXPECT_ROLES"])
    got = {role: len(addrs) for role, addrs in cluster.items()}
    if got != expect:
        fail("cluster roles %r, expected %r" % (got, expect))

    mine = cluster[task["type"]][task["index"]]
    others = {"%s:%d" % (role, i): addr for role, addrs in cluster.items()
              for i, addr in enumerate(addrs) if (role, i) != (task["type"], task["index"])}
    if len(set(others.values()) | {mine}) != len(others) + 1:
        fail("two tasks share an address: %r" % cluster)

    host, port = mine.rsplit(":", 1)
    srv = socket.socket()
    srv.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    srv.bind((host, int(port)))
    srv.listen(16)
    heard = set()
    lock = threading.Lock()

    def serve():
        while True:
            conn, _ = srv.accept()
            with conn:
                conn.settimeout(10)
                name = conn.recv(256).decode().strip()
                conn.sendall(b"ok\n")
            # printed before it counts: the main thread may exit as soon as it does
            with lock:
                say("heard from", name)
                heard.add(name)

    threading.Thread(target=serve, daemon=True).start()

    for name, addr in sorted(others.items()):
        h, p = addr.rsplit(":", 1)
        while True:
            try:
                with socket.create_connection((h, int(p)), timeout=5) as c:
                    c.sendall(me.encode() + b"\n")
                    if c.recv(16).strip() != b"ok":
                        raise OSError("no answer")
                break
            except OSError as e:
                if time.monotonic() > DEADLINE:
                    fail("could not reach %s at %s: %s" % (name, addr, e))
                time.sleep(0.2)
        say("reached", name, "at", addr)

    if os.environ.get("UNTRACKED") == "1":
        say("all reached; serving until killed")
        while True:
            time.sleep(1)
    while True:
        with lock:
            missing = set(others) - heard
        if not missing:
            break
        if time.monotonic() > DEADLINE:
            fail("never heard from %s" % sorted(missing))
        time.sleep(0.1)
    say("ALL CONNECTED", me)


if __name__ == "__main__":
    main()
