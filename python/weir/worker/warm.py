"""A warm worker: one weir job that runs many calls, and the frames both sides speak
(docs/internals/calls.md).

Run as a script by the job (`PYTHON .../weir/worker/warm.py`): it reads the key in
$WEIR_WARM_DIR and connects to the program's socket there (or, given $WEIR_WARM_ADDR and
$WEIR_WARM_KEY, to the program's TCP port: a worker on another node), says hello, then
runs the call frames it reads, one at a time, and writes each result back; it leaves at the
end of its socket, or after $WEIR_WARM_IDLE seconds without a call.  It imports cloudpickle and the
standard library only, so that a worker stays small (the user's modules come with the
functions it runs).  The client (weir/remote/warm.py) imports this module for the codec.
"""

import os
import struct
import sys
from typing import Any, Dict, List, Optional, Set, Tuple

# the header of a frame: the body's length, its kind, the call's id
HEADER = struct.Struct("<IBQ")
# the kinds (one byte each)
HELLO = ord("H")    # worker -> client: key (32 bytes), then b"PID JOB"
CALL = ord("C")     # client -> worker: call_body(): the function's hash and pickle, args
CANCEL = ord("c")   # client -> worker: drop the call when it has not started
VALUE = ord("R")    # worker -> client: the value, cloudpickled
PATHVAL = ord("P")  # worker -> client: the value is in the results folder (too large)
ERROR = ord("E")    # worker -> client: an error record (worker/runner.py's), cloudpickled
CANCELLED = ord("K")  # worker -> client: the call was cancelled (SIGINT, or before it ran)
BYE = ord("B")      # worker -> client: leaving (idle); what it reads next it does not run
# actors (docs/internals/calls.md, "Actors")
CREATE = ord("A")   # client -> actor: call_body() of the class, args (args, kwargs, concurrency)
METHOD = ord("M")   # client -> actor: method_body(): the method's name, the args' pickle
LINK = ord("L")     # a task -> client: hello of a process that calls actors: key, b"PID"
ACTOR_CALL = ord("m")  # a task -> client: the actor's id (u64), then method_body()
LOOKUP = ord("N")   # a task -> client: a named actor: b"NAMESPACE\0NAME"
DIED = ord("D")     # client -> a task: the actor of the call has ended: the cause (text)
# nested calls (docs/internals/calls.md, "Nested calls")
SUBMIT = ord("S")   # a task -> client: a call or an actor made by a task: the pickle of
                    # (function or class, Ray's options, args, kwargs)
BLOCKED = ord("W")  # worker -> client: the call it runs waits for other calls: send it more
UNBLOCKED = ord("U")  # worker -> client: that call runs on
REF = ord("I")      # client -> a task: the program's id of the call it made (u64)
FETCH = ord("G")    # a task -> client: the value of the program's call of that id (u64)
OWN = ord("O")      # a task -> client: a shared segment it put: size (u64), then its path
# streaming generators and results in shared memory (docs/internals/calls.md, "Streaming"
# and "Results in shared memory")
SHMVAL = ord("Q")   # worker -> client: the value is a segment in /dev/shm: size (u64), path
ITEM = ord("Y")     # worker -> client: a generator's item: its index (u64), then the kind
                    # of its value (u8: VALUE or SHMVAL) and that kind's body
KILL = ord("k")     # a task -> client: ray.kill: the actor's id (u64), then b"1" (no_restart)
CANCEL_REF = ord("z")  # a task -> client: ray.cancel of the program's call: id (u64), b"FR"
ACTOR_EXIT = ord("T")  # actor -> client: that call ended the actor (ray.actor.exit_actor(),
                       # __ray_terminate__): the actor leaves once its running calls end
# placement groups (docs/internals/calls.md, "Placement groups"; worker/bundle.py)
BUNDLE = ord("J")   # a bundle host -> client: hello: key, then b"PID JOB INDEX"
SPAWN = ord("X")    # client -> a bundle host: start a worker (slot id): JSON argv and env
EXITED = ord("x")   # a bundle host -> client: the worker of that slot ended: its exit status
KINDS = frozenset((HELLO, CALL, CANCEL, VALUE, PATHVAL, ERROR, CANCELLED, BYE, CREATE,
                   METHOD, LINK, ACTOR_CALL, LOOKUP, DIED, SUBMIT, BLOCKED, UNBLOCKED, REF,
                   FETCH, OWN, SHMVAL, ITEM, KILL, CANCEL_REF, BUNDLE, SPAWN, EXITED,
                   ACTOR_EXIT))
KEY_BYTES = 32
SHM_DIR = "/dev/shm"
# the module (made by main()) whose `worker` is this process's _Worker
CURRENT_MODULE = "_weir_warm_current"
# the largest body a frame may carry: a larger value goes through the results folder
MAX_BODY = 1 << 30
# a value whose pickle is larger than this is written to a file, not sent in the frame
INLINE_VALUE = 1 << 20
# a value whose pickle and out-of-band buffers together are larger than this is written to a
# segment in /dev/shm that every reader maps (Ray's max_direct_call_object_size: 100 KiB)
SHM_VALUE = 100 << 10
# the attribute that marks a streaming generator's function (compat/ray/api.py, _listing):
# the generator function itself, whose items go to the program one by one
STREAM_ATTR = "__weir_stream__"
# the first character of an actor's method name in a METHOD frame when its items stream
STREAM_MARK = "*"
# in a METHOD frame's name, before the concurrency group the call was sent to
# (.options(concurrency_group=)); none: the method's own (@ray.method), else the default
GROUP_MARK = "@"
# the attribute @ray.method(concurrency_group=) sets on a method
GROUP_ATTR = "__weir_concurrency_group__"
# the method every actor has that ends it after the calls sent before (Ray's name)
TERMINATE = "__ray_terminate__"
# the attribute of the exception classes that end an actor as exit_actor() does, besides
# SystemExit (compat/ray/exceptions.py's AsyncioActorExit: the class is not importable here)
EXIT_ATTR = "__weir_actor_exit__"


def ends_actor(e: BaseException) -> bool:
    """Whether e, raised by an actor's method, ends the actor (ray.actor.exit_actor(),
    sys.exit()) rather than the call."""
    return isinstance(e, SystemExit) or bool(getattr(type(e), EXIT_ATTR, False))


class ActorExit(SystemExit):
    """What __ray_terminate__ raises in the actor (and exit_actor() in a sync one)."""


def _terminate() -> None:
    raise ActorExit("the actor was asked to end (__ray_terminate__)")


class FrameError(ValueError):
    """A frame that breaks the format (unknown kind, a body over MAX_BODY)."""


def encode(kind: int, call_id: int, body: bytes = b"") -> bytes:
    """One frame: the header, then the body."""
    if kind not in KINDS:
        raise FrameError("frame: unknown kind %r" % (kind,))
    if len(body) > MAX_BODY:
        raise FrameError("frame: a body of %d bytes is over the most, %d" % (len(body),
                                                                           MAX_BODY))
    return HEADER.pack(len(body), kind, call_id) + body


class FrameReader:
    """Frames out of a byte stream fed in pieces of any size."""

    def __init__(self) -> None:
        self._buf = bytearray()

    def feed(self, data: bytes) -> List[Tuple[int, int, bytes]]:
        """The frames completed by data: (kind, call id, body) each, in order.  Raises
        FrameError on a header that breaks the format."""
        self._buf += data
        out: List[Tuple[int, int, bytes]] = []
        pos = 0
        buf = self._buf
        while len(buf) - pos >= HEADER.size:
            n, kind, cid = HEADER.unpack_from(buf, pos)
            if kind not in KINDS:
                raise FrameError("frame at byte %d: unknown kind %d" % (pos, kind))
            if n > MAX_BODY:
                raise FrameError("frame at byte %d: a body of %d bytes is over the most, %d"
                                 % (pos, n, MAX_BODY))
            end = pos + HEADER.size + n
            if len(buf) < end:
                break
            out.append((kind, cid, bytes(buf[pos + HEADER.size:end])))
            pos = end
        if pos:
            del buf[:pos]
        return out

    def pending(self) -> int:
        """Bytes held of a frame not complete yet."""
        return len(self._buf)


def hello_body(key: bytes, pid: int, job: str) -> bytes:
    """The hello's body: the key, then "PID JOB"."""
    return key + ("%d %s" % (pid, job)).encode()


def parse_hello(body: bytes) -> Tuple[bytes, int, str]:
    """(key, pid, job id text) of a hello; FrameError when it is not one."""
    if len(body) <= KEY_BYTES:
        raise FrameError("hello: too short")
    words = body[KEY_BYTES:].decode("ascii", "replace").split(" ", 1)
    if len(words) != 2 or not words[0].isdigit():
        raise FrameError("hello: expected PID JOB after the key")
    return body[:KEY_BYTES], int(words[0]), words[1]


FN_LEN = struct.Struct("<I")
HASH_BYTES = 32


def call_body(fhash: bytes, fn: Optional[bytes], args: bytes) -> bytes:
    """A call's body: the function's sha256 (32 bytes), its pickle's length (u32, 0 when the
    worker has it already) and pickle, then the pickle of (args, kwargs)."""
    if len(fhash) != HASH_BYTES:
        raise FrameError("call: the function's hash must be %d bytes" % HASH_BYTES)
    fn = fn or b""
    return fhash + FN_LEN.pack(len(fn)) + fn + args


def parse_call(body: bytes) -> Tuple[bytes, Optional[bytes], bytes]:
    """(hash, the function's pickle or None, the arguments' pickle) of a call's body."""
    head = HASH_BYTES + FN_LEN.size
    if len(body) < head:
        raise FrameError("call: a body of %d bytes is shorter than its head" % len(body))
    (n,) = FN_LEN.unpack_from(body, HASH_BYTES)
    if head + n > len(body):
        raise FrameError("call: the function's pickle runs past the body")
    return body[:HASH_BYTES], (body[head:head + n] if n else None), body[head + n:]


NAME_LEN = struct.Struct("<H")
ACTOR_ID = struct.Struct("<Q")


def method_body(name: str, args: bytes) -> bytes:
    """A method call's body: the name's length (u16) and name (UTF-8), then the pickle of
    (args, kwargs)."""
    raw = name.encode()
    if not raw or len(raw) > 0xFFFF:
        raise FrameError("method: a name of 1 to 65535 bytes expected, got %d" % len(raw))
    return NAME_LEN.pack(len(raw)) + raw + args


def parse_method(body: bytes) -> Tuple[str, bytes]:
    """(name, the arguments' pickle) of a method call's body."""
    if len(body) < NAME_LEN.size:
        raise FrameError("method: a body of %d bytes is shorter than its head" % len(body))
    (n,) = NAME_LEN.unpack_from(body)
    end = NAME_LEN.size + n
    if n == 0 or end > len(body):
        raise FrameError("method: the name runs past the body")
    return body[NAME_LEN.size:end].decode("utf-8", "replace"), body[end:]


SIZE = struct.Struct("<Q")
ITEM_HEAD = struct.Struct("<QB")


def shm_body(size: int, path: str) -> bytes:
    """A SHMVAL body: the segment's size (u64), then its path (UTF-8)."""
    return SIZE.pack(size) + path.encode()


def parse_shm(body: bytes) -> Tuple[int, str]:
    """(size, path) of a SHMVAL body."""
    if len(body) <= SIZE.size:
        raise FrameError("shared value: a body of %d bytes names no path" % len(body))
    return SIZE.unpack_from(body)[0], body[SIZE.size:].decode("utf-8", "replace")


def item_body(index: int, kind: int, body: bytes) -> bytes:
    """An ITEM body: the item's index (u64), its value's kind (VALUE or SHMVAL), its body."""
    if kind not in (VALUE, SHMVAL):
        raise FrameError("item: a value's kind must be R or Q, got %r" % (kind,))
    return ITEM_HEAD.pack(index, kind) + body


def parse_item(body: bytes) -> Tuple[int, int, bytes]:
    """(index, the value's kind, its body) of an ITEM body."""
    if len(body) < ITEM_HEAD.size:
        raise FrameError("item: a body of %d bytes is shorter than its head" % len(body))
    index, kind = ITEM_HEAD.unpack_from(body)
    if kind not in (VALUE, SHMVAL):
        raise FrameError("item %d: unknown kind of value %d" % (index, kind))
    return index, kind, body[ITEM_HEAD.size:]


def connect(folder: str) -> Tuple[Any, bytes]:
    """(a connected socket, the key) to the program of that folder: over TCP when this
    process reaches it so (a worker given WEIR_WARM_ADDR: remote/channel.py), else its Unix
    socket, the key read from the folder.  Raises OSError when it cannot."""
    import socket
    cur = sys.modules.get(CURRENT_MODULE)
    tcp = getattr(cur, "channel", None)
    if tcp is not None and tcp[0] == folder:
        _, host, port, key = tcp
        sock = socket.create_connection((host, port), timeout=30)
        sock.settimeout(None)
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_KEEPALIVE, 1)
        return sock, key
    with open(os.path.join(folder, "key"), "rb") as f:
        key = f.read()
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        sock.connect(os.path.join(folder, "sock"))
    except OSError:
        sock.close()
        raise
    return sock, key


def tcp_channel(folder: str) -> Optional[Tuple[str, str, int, bytes]]:
    """(folder, host, port, key) when this worker was told to reach its program over TCP
    (WEIR_WARM_ADDR, WEIR_WARM_KEY), else None.  The key leaves the environment here: the
    calls' code and the processes they start do not inherit it."""
    addr = os.environ.pop("WEIR_WARM_ADDR", "")
    hexkey = os.environ.pop("WEIR_WARM_KEY", "")
    if not addr:
        return None
    host, _, port = addr.rpartition(":")
    if host.startswith("[") and host.endswith("]"):
        host = host[1:-1]
    try:
        key = bytes.fromhex(hexkey)
    except ValueError:
        key = b""
    if not host or not port.isdigit() or len(key) != KEY_BYTES:
        raise ValueError("WEIR_WARM_ADDR/WEIR_WARM_KEY: expected HOST:PORT and %d bytes in "
                         "hex, got %r and %d characters" % (KEY_BYTES, addr, len(hexkey)))
    return folder, host, int(port), key


def result_file(folder: str, tag: str, call_id: int) -> str:
    """Where a value too large for a frame is written: FOLDER/warm-TAG-ID.pkl."""
    return os.path.join(folder, "warm-%s-%d.pkl" % (tag, call_id))


# ---- the worker ---------------------------------------------------------------------------

class _Worker:
    def __init__(self, sock: Any, cloudpickle: Any, runner: Any) -> None:
        self.sock = sock
        self.cp = cloudpickle
        self.runner = runner
        self.reader = FrameReader()
        self.queue: List[Tuple[int, int, bytes]] = []
        self.cancelled: Set[int] = set()
        # the calls whose cancel was read, until they end (is_canceled(): a call that caught
        # its KeyboardInterrupt, a sync actor's method, which runs on)
        self.seen_cancel: Set[int] = set()
        self.functions: Dict[bytes, Any] = {}
        self.lines: List[str] = []
        self.eof = False
        self.running = False
        self.current = 0  # the call being run
        # SIGINT (the program's cancel, _on_sigint) acts only while the main thread runs a
        # call's own code: while quiet > 0 it is in this class's reading or writing of the
        # socket, or serve_while()'s wait, which read the frames themselves; a SIGINT then
        # (or between two calls) only sets sigint, acted on where a call's code is entered
        # next (begin())
        self.quiet = 0
        self.sigint = False
        self.results = os.environ.get("WEIR_WARM_RESULTS", "")
        self.tag = os.environ.get("WEIR_WARM_TAG", "x")
        # an actor's worker: its instance, how many of its methods may run at once, and
        # where they run when more than one may (a thread pool, or an event loop)
        import threading
        self.instance: Any = None
        self.concurrency = 1
        self.concurrent = False
        self.threads: Any = None
        self.aloop: Any = None
        self.asem: Any = None
        self.slock = threading.Lock()
        self.failed = False  # the actor's constructor raised
        # an async actor's calls as asyncio tasks (read and changed in its loop's thread)
        self.atasks: Dict[int, Any] = {}
        # the actor ends (exit_actor()): no call more starts; wake_w wakes the loop
        self.exiting = False
        self.wake_r, self.wake_w = -1, -1
        self.local = threading.local()  # .cid: the call this thread runs (a task's id)
        # an actor's concurrency groups: their sizes (the CREATE frame's), then each one's
        # thread pool or, in an async actor, semaphore
        self.group_sizes: Dict[str, int] = {}
        self.groups: Dict[str, Any] = {}
        # worker/segment.py (loaded by main()): large values go to /dev/shm; None: never
        self.segment: Any = None
        self.seg_ids = 0

    def _take(self, data: bytes) -> None:
        if not data:
            self.eof = True
            return
        for fr in self.reader.feed(data):
            if fr[0] == CANCEL:
                self.cancel_call(fr[1])
            else:
                self.queue.append(fr)

    def cancel_call(self, cid: int) -> None:
        """A call's cancel (CANCEL): one not begun never runs; an async actor's running
        call has its task cancelled; a sync one's code sees it in is_canceled()."""
        self.cancelled.add(cid)
        self.seen_cancel.add(cid)
        if self.aloop is not None:  # an async actor's running call: its task
            self.aloop.call_soon_threadsafe(self._cancel_task, cid)

    def drain(self) -> None:
        """Reads what is there without waiting."""
        import select
        self.quiet += 1
        try:
            while not self.eof and select.select([self.sock], [], [], 0)[0]:
                self._take(self.sock.recv(1 << 20))
        finally:
            self.quiet -= 1

    def is_canceled(self, cid: int) -> bool:
        """Whether the call cid (running here) has been cancelled: the frames read so far
        (those waiting are read first when this thread reads the socket)."""
        import threading
        if not self.concurrent and threading.current_thread() is threading.main_thread():
            self.drain()
        return cid in self.seen_cancel

    def begin(self) -> None:
        """The main thread enters the code of the call now current: a SIGINT that came when
        it could not act (sigint) acts now, KeyboardInterrupt when that call's cancel is
        among the frames."""
        self.running = True
        if self.sigint:
            self.sigint = False
            self.drain()
            if self.current in self.cancelled:
                self.cancelled.discard(self.current)
                raise KeyboardInterrupt

    def send(self, data: bytes) -> None:
        """Writes data, reading meanwhile whenever the socket has frames: the client may be
        writing calls while this writes a result, and neither side must wait on the other.
        A concurrent actor's threads write under a lock while this thread reads."""
        import select
        if self.concurrent:
            with self.slock:
                self.sock.sendall(data)
            return
        view = memoryview(data)
        self.sock.setblocking(False)
        self.quiet += 1
        try:
            while view:
                try:
                    n = self.sock.send(view)
                    view = view[n:]
                    continue
                except BlockingIOError:
                    pass
                r, w, _ = select.select([] if self.eof else [self.sock], [self.sock], [])
                if r:
                    try:
                        self._take(self.sock.recv(1 << 20))
                    except BlockingIOError:
                        pass
        finally:
            self.quiet -= 1
            self.sock.setblocking(True)

    def flush_lines(self) -> None:
        if self.lines:
            lines, self.lines = self.lines, []
            sys.stdout.write("".join(lines))
            sys.stdout.flush()

    def _target(self, kind: int, cid: int, body: bytes) -> Tuple[str, Any, Any, Any]:
        """(name, the callable, args, kwargs) of a call, a method call or an actor's
        creation."""
        if kind == METHOD:
            mname, abytes = parse_method(body)
            if self.instance is None:
                raise FrameError("call %d: %s: this worker holds no actor" % (cid, mname))
            streamed = mname.startswith(STREAM_MARK)
            mname = mname.lstrip(STREAM_MARK).partition(GROUP_MARK)[0]
            fn = _terminate if mname == TERMINATE else getattr(self.instance, mname)
            if streamed:
                fn = _Streamed(fn)
            name = "%s.%s" % (type(self.instance).__name__, mname)
        else:
            fhash, fbytes, abytes = parse_call(body)
            fn = self.functions.get(fhash)
            if fn is None:
                if fbytes is None:
                    raise FrameError("call %d: function %s is not known here"
                                     % (cid, fhash.hex()[:16]))
                fn = self.cp.loads(fbytes)
                self.functions[fhash] = fn
            name = str(getattr(fn, "__qualname__", None) or getattr(fn, "__name__", "call"))
            if kind == CREATE:
                name += ".__init__"
        loaded = self.cp.loads(abytes)
        args, kwargs = loaded[0], loaded[1]
        if kind == CREATE:
            self.concurrency = int(loaded[2])
            self.group_sizes = dict(loaded[3]) if len(loaded) > 3 else {}
        if self.runner.REFS_MODULE in sys.modules and (args or kwargs):
            args, kwargs = self.runner._resolve(args, kwargs)
        return name, fn, args, kwargs

    def run_one(self, cid: int, body: bytes, kind: int = CALL) -> None:
        import time
        t0 = time.perf_counter()
        name = "?"
        if self.exiting:  # the actor ends: the calls sent after do not run
            self.after_exit(cid)
            return
        if cid in self.cancelled:
            self.cancelled.discard(cid)
            self.seen_cancel.discard(cid)
            self.send(encode(CANCELLED, cid))
            self.lines.append("weir-call %d cancelled before it started\n" % cid)
            return
        outer = getattr(self.local, "cid", 0)  # a call waiting under this one (nested)
        try:
            name, fn, args, kwargs = self._target(kind, cid, body)
            self.local.cid = cid
            self.current = cid
            try:
                self.begin()
                stream = getattr(fn, STREAM_ATTR, None)
                value: Any
                if stream is not None and kind != CREATE:
                    value = self.stream(cid, stream(*args, **kwargs))
                else:
                    value = fn(*args, **kwargs)
            finally:
                self.running = False
                self.local.cid = outer
                self.seen_cancel.discard(cid)
        except KeyboardInterrupt:
            self.send(encode(CANCELLED, cid))
            self.lines.append("weir-call %d %s cancelled\n" % (cid, name))
            return
        except SystemExit as e:
            if kind != METHOD:
                raise
            self.exit_actor(cid, name, t0, e)
            return
        except Exception as e:
            if kind == METHOD and ends_actor(e):
                self.exit_actor(cid, name, t0, e)
                return
            self.reply_error(cid, name, t0, e)
            if kind == CREATE:  # no actor: the worker leaves (the program fails its calls)
                self.failed = True
            return
        if kind == CREATE:
            self.created(value)
            value = None
        self.reply(cid, name, t0, value)

    def stream(self, cid: int, gen: Any) -> int:
        """Sends a generator's items one by one as it yields them (ITEM frames), while the
        caller of the call (self.running) is only set while the generator runs: a cancel
        read between two items closes the generator.  The count of items."""
        import inspect
        if not inspect.isgenerator(gen) and not isinstance(gen, (list, tuple)):
            raise TypeError("num_returns=\"streaming\"/\"dynamic\" expects a generator, "
                            "got %s" % type(gen).__name__)
        it = iter(gen)
        n = 0
        try:
            while True:
                try:
                    self.begin()
                    item = next(it)
                except StopIteration:
                    return n
                finally:
                    self.running = False
                kind, body = self.pack(item)
                self.send(encode(ITEM, cid, item_body(n, kind, body)))
                n += 1
                if not self.concurrent:
                    self.drain()
                if cid in self.cancelled:
                    self.cancelled.discard(cid)
                    raise KeyboardInterrupt
        finally:
            if inspect.isgenerator(gen):
                gen.close()  # its finally blocks run now, not at the collector's leisure

    def pack(self, value: Any) -> Tuple[int, bytes]:
        """(VALUE, the pickle) of a value, or (SHMVAL, the segment) when its pickle and
        out-of-band buffers are over SHM_VALUE and /dev/shm takes them (written under a
        temporary name and renamed: a worker killed mid-write leaves no segment to read).
        Raises what pickling raises."""
        seg = self.segment
        if seg is None:
            return VALUE, self.cp.dumps(value, protocol=5)
        data, bufs = seg.encode(value)
        if len(data) + sum(b.nbytes for b in bufs) > SHM_VALUE:
            self.seg_ids += 1
            path = os.path.join(SHM_DIR, "weir-obj-%s-%d-r%d" % (self.tag, os.getpid(),
                                                                 self.seg_ids))
            try:
                return SHMVAL, shm_body(seg.write_segment(path, data, bufs), path)
            except OSError:
                pass  # /dev/shm full, or none: in the frame (or the results folder)
        if bufs:
            data = self.cp.dumps(value, protocol=5)
        return VALUE, data

    def created(self, instance: Any) -> None:
        """The actor's instance made: how its methods run from now on (one at a time in
        this thread; a thread pool of max_concurrency; an event loop for async ones)."""
        import inspect
        self.instance = instance
        coro = any(inspect.iscoroutinefunction(m)
                   for _, m in inspect.getmembers(type(instance), inspect.isfunction))
        if coro:
            import asyncio
            self.aloop = asyncio.new_event_loop()
            import threading
            threading.Thread(target=self.aloop.run_forever, name="weir-actor-loop",
                             daemon=True).start()
            n = self.concurrency or 1000
            self.asem = asyncio.run_coroutine_threadsafe(self._make_sem(n), self.aloop).result()
            for g, size in self.group_sizes.items():
                self.groups[g] = asyncio.run_coroutine_threadsafe(self._make_sem(size),
                                                                  self.aloop).result()
            self.concurrent = True
        elif self.concurrency > 1 or self.group_sizes:
            from concurrent.futures import ThreadPoolExecutor
            self.threads = ThreadPoolExecutor(self.concurrency,
                                              thread_name_prefix="weir-actor")
            for g, size in self.group_sizes.items():
                self.groups[g] = ThreadPoolExecutor(size, thread_name_prefix="weir-actor-" + g)
            self.concurrent = True

    def group_of(self, body: bytes) -> Any:
        """The thread pool (or semaphore) of a method call's concurrency group: the one it
        was sent to, else its method's, else the actor's default one.  KeyError names a
        group the actor does not have."""
        mname = parse_method(body)[0].lstrip(STREAM_MARK)
        mname, _, group = mname.partition(GROUP_MARK)
        if not group:
            group = getattr(getattr(type(self.instance), mname, None), GROUP_ATTR, "") or ""
        if not group:
            return self.asem if self.aloop is not None else self.threads
        if group not in self.groups:
            raise KeyError("%s: the actor has no concurrency group %r (its groups: %s)"
                           % (mname, group, ", ".join(sorted(self.groups)) or "none"))
        return self.groups[group]

    async def _make_sem(self, n: int) -> Any:
        import asyncio
        return asyncio.Semaphore(n)

    async def _run_async(self, cid: int, body: bytes, sem: Any = None) -> None:
        """An async actor's call, as a task of its event loop: a cancel (CANCEL frame)
        cancels the task, as Ray does (the method sees asyncio.CancelledError where it
        awaits), and is answered CANCELLED whatever the method does with it."""
        import asyncio
        import inspect
        import time
        t0 = time.perf_counter()
        name = "?"
        self.atasks[cid] = asyncio.current_task()
        try:
            if cid in self.cancelled:  # its cancel came before its task began
                raise asyncio.CancelledError
            async with sem or self.asem:
                if self.exiting:  # the actor ends: the calls not begun do not run
                    self.after_exit(cid)
                    return
                name, fn, args, kwargs = self._target(METHOD, cid, body)
                stream = getattr(fn, STREAM_ATTR, None)
                value = (stream if stream is not None else fn)(*args, **kwargs)
                if stream is not None and inspect.isasyncgen(value):
                    value = await self._stream_async(cid, value)
                elif stream is not None:
                    value = self.stream(cid, value)
                elif inspect.isawaitable(value):
                    value = await value
        except (KeyboardInterrupt, asyncio.CancelledError):
            # cancelled (a streaming method between two items, or its task)
            self.cancelled.discard(cid)
            self.send(encode(CANCELLED, cid))
            self.lines.append("weir-call %d %s\n" % (cid, "%s cancelled" % name if name != "?"
                                                      else "cancelled before it started"))
            return
        except BaseException as e:
            if ends_actor(e):
                self.exit_actor(cid, name, t0, e)
            elif isinstance(e, Exception):
                self.reply_error(cid, name, t0, e)
            else:
                raise
            return
        finally:
            self.atasks.pop(cid, None)
        self.reply(cid, name, t0, value)

    def _cancel_task(self, cid: int) -> None:
        """In the loop's thread: cancels the task of an async actor's call (none when it
        has ended; one not begun sees its cancel at its start)."""
        task = self.atasks.get(cid)
        if task is not None:
            task.cancel()

    def exit_actor(self, cid: int, name: str, t0: float, e: BaseException) -> None:
        """The call ended the actor: the program is told (ACTOR_EXIT: the call's caller
        gets RayActorError, the actor is not restarted), no call more starts here, and
        the loop ends once the calls running in other threads or tasks have returned."""
        import time
        self.exiting = True
        self.send(encode(ACTOR_EXIT, cid))
        self.lines.append("weir-call %d %s ended the actor (%s) %.2f ms\n"
                          % (cid, name, type(e).__name__, (time.perf_counter() - t0) * 1e3))
        if self.wake_w >= 0:
            try:
                os.write(self.wake_w, b"x")
            except OSError:
                pass

    def after_exit(self, cid: int) -> None:
        """A call that came or waited past the actor's end: not run; here the program
        fails it (its ACTOR_EXIT frame), so nothing is sent."""

    def finish(self) -> None:
        """After the loop: the calls running in a concurrent actor's threads or event loop
        run to their end (those not begun return at once)."""
        if self.threads is not None:
            self.threads.shutdown(wait=True)
        for g in self.groups.values():
            if hasattr(g, "shutdown"):
                g.shutdown(wait=True)
        if self.aloop is not None:
            import asyncio

            async def rest() -> None:
                me = asyncio.current_task()
                tasks = [t for t in list(self.atasks.values()) if t is not me]
                if tasks:
                    await asyncio.wait(tasks)
            asyncio.run_coroutine_threadsafe(rest(), self.aloop).result()

    async def _stream_async(self, cid: int, agen: Any) -> int:
        """An async generator's items sent one by one (an async actor's method); the count.
        A cancel read before an item closes it."""
        n = 0
        try:
            async for item in agen:
                kind, body = self.pack(item)
                self.send(encode(ITEM, cid, item_body(n, kind, body)))
                n += 1
                if cid in self.cancelled:
                    self.cancelled.discard(cid)
                    raise KeyboardInterrupt
            return n
        finally:
            await agen.aclose()

    def dispatch(self, kind: int, cid: int, body: bytes) -> None:
        """Runs a frame the loop read: a method call of a concurrent actor goes to its
        threads or its event loop, anything else runs here, now."""
        where: Any = None
        if kind == METHOD and self.instance is not None:
            try:
                where = self.group_of(body)
            except (KeyError, FrameError) as e:
                import time
                self.reply_error(cid, "?", time.perf_counter(), ValueError(str(e.args[0])))
                return
        if kind == METHOD and self.concurrent:
            if self.aloop is not None:
                import asyncio
                asyncio.run_coroutine_threadsafe(self._run_async(cid, body, where), self.aloop)
            else:
                where.submit(self.run_one, cid, body, METHOD)
        elif kind in (CALL, CREATE, METHOD):
            self.run_one(cid, body, kind)

    def reply_error(self, cid: int, name: str, t0: float, e: BaseException) -> None:
        import time
        if e.__traceback__ is not None:  # from the user's function on
            e.__traceback__ = e.__traceback__.tb_next
        rec = self.runner._error_record(e)
        sys.stderr.write(rec[3])
        self.send(encode(ERROR, cid, self.cp.dumps(rec, protocol=5)))
        self.lines.append("weir-call %d %s failed %.2f ms: %s\n"
                          % (cid, name, (time.perf_counter() - t0) * 1e3, rec[1]))

    def reply(self, cid: int, name: str, t0: float, value: Any) -> None:
        import time
        try:
            kind, data = self.pack(value)
        except Exception as e:
            import traceback
            rec = ("error", "weir.errors.SerializationError", "the result cannot be pickled: "
                   "%s: %s" % (type(e).__name__, e), traceback.format_exc(), None)
            self.send(encode(ERROR, cid, self.cp.dumps(rec, protocol=5)))
            self.lines.append("weir-call %d %s failed: the result cannot be pickled\n"
                              % (cid, name))
            return
        if kind == SHMVAL:
            self.send(encode(SHMVAL, cid, data))
        elif len(data) > INLINE_VALUE and self.results:
            path = result_file(self.results, self.tag, cid)
            tmp = path + ".tmp"
            try:
                with open(tmp, "wb") as f:
                    f.write(data)
                os.rename(tmp, path)
            except OSError as e:
                rec = ("error", "weir.errors.SerializationError", "the result (%d bytes) "
                       "cannot be written to %s: %s" % (len(data), self.results, e), "", None)
                self.send(encode(ERROR, cid, self.cp.dumps(rec, protocol=5)))
                self.lines.append("weir-call %d %s failed: %s\n" % (cid, name, rec[2]))
                return
            self.send(encode(PATHVAL, cid))
        else:
            self.send(encode(VALUE, cid, data))
        self.lines.append("weir-call %d %s succeeded %.2f ms\n"
                          % (cid, name, (time.perf_counter() - t0) * 1e3))

    def serve_while(self, ready: Any, wake_fd: int) -> bool:
        """Runs the calls the program sends while the call now running waits (in ray.get)
        for others, until ready() is true: the program is told (BLOCKED) that this worker
        may take calls, so that a tree of calls on as many workers as cores cannot
        deadlock; the CPUs of the worker's job serve the children.  wake_fd is readable
        when what is waited for may have changed.  False when this process cannot serve
        (an actor, a thread other than the call's): the caller waits as it would."""
        import select
        import threading
        if self.instance is not None or self.concurrent or not self.running or \
                threading.current_thread() is not threading.main_thread():
            return False
        cur = self.current
        # quiet: a SIGINT does not read the socket here (this loop does; one that read it
        # between the select and the recv below left the recv waiting for ever), nor
        # interrupts the wait: the cancel of the waiting call is seen in the frames
        self.quiet += 1
        try:
            self.send(encode(BLOCKED, cur))
            while not ready():
                if cur in self.cancelled:  # its cancel came (or a call ran on top)
                    self.cancelled.discard(cur)
                    raise KeyboardInterrupt
                if self.queue:
                    kind, cid, body = self.queue.pop(0)
                    self.quiet -= 1  # a call run on top is cancelled as any call
                    try:
                        self.dispatch(kind, cid, body)
                    finally:
                        self.quiet += 1
                    self.current, self.running = cur, True
                    continue
                if self.eof:
                    return True  # the program has ended: the watcher ends this process
                r = select.select([self.sock, wake_fd], [], [])[0]
                if wake_fd in r:
                    try:
                        os.read(wake_fd, 4096)
                    except BlockingIOError:
                        pass
                if self.sock in r:
                    self._take(self.sock.recv(1 << 20))
        finally:
            self.current, self.running = cur, True
            try:
                self.send(encode(UNBLOCKED, cur))
            finally:
                self.quiet -= 1
        self.begin()  # a SIGINT that came meanwhile: the waiting call's cancel acts now
        return True

    def loop(self, idle: float) -> None:
        import select
        waits = [self.sock] + ([self.wake_r] if self.wake_r >= 0 else [])
        while not self.exiting:
            if not self.queue:
                self.flush_lines()
                if self.eof:
                    return
                r = select.select(waits, [], [], idle if idle > 0 else None)[0]
                if not r:
                    # idle: say so, then what still comes was sent before the client knew
                    self.send(encode(BYE, 0))
                    return
                if self.sock in r:
                    self._take(self.sock.recv(1 << 20))
                continue
            if not self.concurrent:
                self.drain()
            kind, cid, body = self.queue.pop(0)
            self.dispatch(kind, cid, body)
            if self.failed:
                return
        self.finish()  # exit_actor(): its running calls end first


class _Streamed:
    """An actor's method called for its items one by one (STREAM_MARK in its frame)."""

    def __init__(self, fn: Any) -> None:
        setattr(self, STREAM_ATTR, fn)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return list(getattr(self, STREAM_ATTR)(*args, **kwargs))


def _on_sigint(worker: _Worker) -> Any:
    """SIGINT is the program's cancel: it sends the cancel frame first, then the signal, so
    the frames read here say whether the call now running is the one cancelled (the signal
    may come after that call ended and the next began: the next one runs on)."""
    def handler(signum: int, frame: Any) -> None:
        if worker.concurrent:  # a concurrent actor's calls run on other threads: a cancel
            return  # only drops the calls not started
        if not worker.running or worker.quiet:
            # between two calls, or in the worker's own reading and writing (a drain here
            # would take frames from under a read, or a recv that select() said had data):
            # the next call's code, or the end of the wait, acts on it (begin())
            worker.sigint = True
            return
        worker.sigint = False
        try:
            worker.drain()
        except OSError:
            return
        if worker.current in worker.cancelled:
            worker.cancelled.discard(worker.current)
            raise KeyboardInterrupt
    return handler


def _watch_peer(sock: Any, worker: Optional[_Worker] = None) -> None:
    """Ends the worker when the program's end of the socket closes, even in the middle of a
    call (the loop reads the socket only between calls): nobody waits for the result, and a
    worker must not outlive its program."""
    import select
    p = select.poll()
    p.register(sock, select.POLLRDHUP)
    while True:
        for _, ev in p.poll():
            if ev & (select.POLLRDHUP | select.POLLHUP | select.POLLERR):
                if worker is not None:
                    try:  # the lines of the calls that ended, not written yet
                        worker.flush_lines()
                    except (OSError, ValueError):
                        pass
                sys.stderr.write("weir warm worker: the program has ended; leaving\n")
                sys.stderr.flush()
                os._exit(0)


def main() -> int:
    import signal
    here = os.path.dirname(os.path.abspath(__file__))
    # sys.path[0] is this file's folder: the package's modules must not shadow the user's
    if sys.path and os.path.abspath(sys.path[0]) == here:
        del sys.path[0]
    import importlib.util
    import cloudpickle
    spec = importlib.util.spec_from_file_location("_weir_runner",
                                                  os.path.join(here, "runner.py"))
    assert spec is not None and spec.loader is not None
    runner = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(runner)
    folder = os.environ["WEIR_WARM_DIR"]
    import types
    # where a task's ray.get finds this worker (remote/actors.py, LinkFuture._wait), and
    # how this process reaches its program (connect())
    current = types.ModuleType(CURRENT_MODULE)
    sys.modules[CURRENT_MODULE] = current
    try:
        tcp = tcp_channel(folder)
    except ValueError as e:
        sys.stderr.write("weir warm worker: %s\n" % e)
        return 2
    current.channel = tcp  # type: ignore[attr-defined]
    where = "%s:%d" % (tcp[1], tcp[2]) if tcp is not None else folder
    try:
        sock, key = connect(folder)
    except OSError as e:
        if tcp is None and not os.path.exists(folder):  # the program ended before this
            sys.stderr.write("weir warm worker: the program has ended (%s is gone)\n" % folder)
            return 0
        sys.stderr.write("weir warm worker: cannot reach the program at %s: %s\n" % (where, e))
        return 3
    if tcp is not None:
        sys.stderr.write("weir warm worker: reached the program over TCP at %s\n" % where)
    runner.apply_runtime_env()
    w = _Worker(sock, cloudpickle, runner)
    if os.environ.get("WEIR_WARM_SHM", "1") != "0" and os.path.isdir(SHM_DIR):
        spec = importlib.util.spec_from_file_location("_weir_segment",
                                                      os.path.join(here, "segment.py"))
        assert spec is not None and spec.loader is not None
        w.segment = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(w.segment)
    current.worker = w  # type: ignore[attr-defined]
    if os.environ.get("WEIR_WARM_ACTOR"):  # exit_actor() in another thread wakes the loop
        w.wake_r, w.wake_w = os.pipe()
    signal.signal(signal.SIGINT, _on_sigint(w))
    import threading
    threading.Thread(target=_watch_peer, args=(sock, w), daemon=True).start()
    # a worker a bundle host started (worker/bundle.py) names its slot, not its job
    job = os.environ.get("WEIR_WARM_SLOT") or os.environ.get("WEIR_JOB_ID") or "-"
    w.send(encode(HELLO, 0, hello_body(key, os.getpid(), job)))
    w.loop(float(os.environ.get("WEIR_WARM_IDLE") or 10))
    w.flush_lines()
    return 1 if w.failed else 0


if __name__ == "__main__":
    sys.exit(main())
