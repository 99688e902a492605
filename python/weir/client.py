"""weir.Client: the whole HTTP API of a weir server, jobs and DAGs (docs/api.md).

The server and token come from where the `weir` CLI finds them (weir._config).  Every method
returns the API's JSON as Python objects; an error answer raises ApiError (ResourceError for
a 422) carrying the API's message and status.
"""

import http.client
import json
import os
import shutil
import subprocess
import threading
import time
import urllib.parse
from typing import Any, Dict, Iterator, List, Mapping, Optional, Sequence, Union

from . import _config
from .errors import ApiError, GetTimeoutError, ResourceError, ServerUnreachable, WeirError

JOB_FINAL = ("succeeded", "failed", "killed")
RUN_FINAL = ("success", "failed")

PathLike = Union[str, os.PathLike]


def _q(segment: str) -> str:
    return urllib.parse.quote(str(segment), safe="")


class Client:
    """A connection to one weir server.

    >>> c = weir.Client()                      # WEIR_SERVER, WEIR_TOKEN, ~/.weir/token
    >>> job = c.submit({"name": "hi", "roles": {"worker": {"command": "echo hi"}}})
    >>> c.wait(job["id"], timeout=60)["state"]
    'succeeded'

    One Client may be used from several threads: each thread keeps its own connection.
    """

    def __init__(self, server: Optional[str] = None, token: Optional[str] = None,
                 home: Optional[PathLike] = None, timeout: float = 60.0):
        s = _config.settings(server, token, str(home) if home else None)
        self.settings = s
        self.server = s.server
        self.timeout = timeout
        u = urllib.parse.urlsplit(s.server)
        if u.scheme != "http":
            raise ValueError("server %r: only http:// is served by weir" % s.server)
        self._host = u.hostname or "127.0.0.1"
        self._port = u.port or 80
        self._prefix = u.path.rstrip("/")
        self._local = threading.local()

    def __repr__(self):
        return "weir.Client(%r)" % self.server

    # ---- HTTP ---------------------------------------------------------------------------
    def _conn(self, timeout: float) -> http.client.HTTPConnection:
        c = getattr(self._local, "conn", None)
        if c is None:
            c = http.client.HTTPConnection(self._host, self._port, timeout=timeout)
            self._local.conn = c
        c.timeout = timeout
        if c.sock is not None:
            c.sock.settimeout(timeout)
        return c

    def _drop(self):
        c = getattr(self._local, "conn", None)
        self._local.conn = None
        if c is not None:
            c.close()

    def request(self, method: str, path: str, body: Any = None,
                params: Optional[Mapping[str, Any]] = None,
                headers: Optional[Mapping[str, str]] = None, timeout: Optional[float] = None,
                raw: bool = False, stream: bool = False):
        """One API call: `path` under /api/v1 (e.g. "/jobs/3").  Returns the parsed JSON,
        the bytes with raw=True, or the open response with stream=True.  Raises ApiError
        on an error status, ServerUnreachable when nothing answers."""
        url = self._prefix + "/api/v1" + path
        if params:
            pairs = []
            for k, v in params.items():
                if v is None:
                    continue
                for one in (v if isinstance(v, (list, tuple)) else [v]):
                    if isinstance(one, bool):
                        one = "true" if one else "false"
                    pairs.append((k, str(one)))
            if pairs:
                url += "?" + urllib.parse.urlencode(pairs)
        hdrs = {"Accept": "application/json"}
        if self.settings.token:
            hdrs["Authorization"] = "Bearer " + self.settings.token
        data = None
        if body is not None:
            data = json.dumps(body).encode()
            hdrs["Content-Type"] = "application/json"
        hdrs.update(headers or {})
        t = self.timeout if timeout is None else timeout
        for tries in (0, 1):
            conn = self._conn(t)
            try:
                conn.request(method, url, body=data, headers=hdrs)
                resp = conn.getresponse()
                break
            except (http.client.RemoteDisconnected, BrokenPipeError,
                    ConnectionResetError) as e:
                self._drop()  # a kept-alive connection the server closed: once more
                if tries:
                    raise ServerUnreachable("weir server at %s: %s" % (self.server, e)) from e
            except OSError as e:
                self._drop()
                raise ServerUnreachable("cannot reach the weir server at %s: %s; is `weir "
                                        "server` running?" % (self.server, e)) from e
            except BaseException:
                self._drop()  # interrupted (Ctrl-C) half way: the connection is unusable
                raise
        try:
            if resp.status >= 400:
                text = resp.read()
                self._check_reuse(resp)
                self._raise(resp.status, text, method, path)
            if stream:
                self._local.conn = None  # the caller owns this connection now
                return resp
            payload = resp.read()
        except ApiError:
            raise
        except OSError as e:
            self._drop()
            raise ServerUnreachable("weir server at %s: %s" % (self.server, e)) from e
        except BaseException:
            self._drop()
            raise
        self._check_reuse(resp)
        if raw:
            return payload
        return json.loads(payload.decode() or "null")

    def _check_reuse(self, resp):
        if resp.will_close:
            self._drop()

    def _raise(self, status: int, text: bytes, method: str, path: str):
        body = None
        message = text.decode(errors="replace").strip()
        try:
            body = json.loads(message)
            if isinstance(body, dict):
                message = str(body.get("error") or body.get("detail") or body.get("title")
                              or message)
        except ValueError:
            pass
        if status == 401:
            message += " (the token came from %s)" % self.settings.token_source
        cls = ResourceError if status == 422 else ApiError
        raise cls(status, message, method, path, body)

    def health(self) -> dict:
        """GET /health: the server's status and version (no token needed)."""
        return self.request("GET", "/health")

    # ---- jobs ---------------------------------------------------------------------------
    def submit(self, spec: Union[Mapping[str, Any], PathLike], name: Optional[str] = None,
               priority: Optional[int] = None) -> dict:
        """Submits a job and returns it (the Job, state `queued`).

        `spec` is a native job spec as a dict (docs/jobs.md; paths must be absolute), or the
        path of a spec file (YAML or JSON), which is read by the `weir` program exactly as
        `weir submit FILE` reads it (relative paths against the file's folder)."""
        if isinstance(spec, Mapping):
            body = dict(spec)
            if name is not None:
                body["name"] = name
            if priority is not None:
                body["priority"] = priority
            return self.request("POST", "/jobs", body)
        args = [os.fspath(spec)]
        return self._submit_cli(args, name, priority)

    def submit_tony(self, conf_file: Optional[PathLike] = None, *,
                    executes: Optional[str] = None, task_params: Optional[str] = None,
                    src_dir: Optional[PathLike] = None, python_venv: Optional[PathLike] = None,
                    python_binary_path: Optional[str] = None,
                    shell_env: Optional[Mapping[str, str]] = None,
                    container_env: Optional[Mapping[str, str]] = None,
                    conf: Optional[Mapping[str, Any]] = None, framework: Optional[str] = None,
                    name: Optional[str] = None, priority: Optional[int] = None,
                    cwd: Optional[PathLike] = None) -> dict:
        """Submits a job the TonY way: a tony.xml and ClusterSubmitter's flags (docs/tony.md),
        read by the `weir` program as `weir submit --conf_file ...` reads them.  Relative
        paths are taken against `cwd` (default: the current directory)."""
        args: List[str] = []
        for flag, val in (("--conf_file", conf_file), ("--executes", executes),
                          ("--task_params", task_params), ("--src_dir", src_dir),
                          ("--python_venv", python_venv),
                          ("--python_binary_path", python_binary_path),
                          ("--framework", framework)):
            if val is not None:
                args.append("%s=%s" % (flag, os.fspath(val)))
        for flag, env in (("--shell_env", shell_env), ("--container_env", container_env)):
            for k, v in (env or {}).items():
                args.append("%s=%s=%s" % (flag, k, v))
        for k, v in (conf or {}).items():
            args.append("--conf=%s=%s" % (k, v))
        if not args:
            raise ValueError("submit_tony: give a conf_file or flags")
        return self._submit_cli(args, name, priority, cwd)

    def _submit_cli(self, args: List[str], name, priority, cwd=None) -> dict:
        exe = os.environ.get("WEIR_BIN") or shutil.which("weir")
        if not exe:
            raise WeirError("reading a spec file or tony.xml needs the `weir` program: put it "
                            "on PATH or set WEIR_BIN")
        argv = [exe, "--server", self.server, "submit", "--detach"]
        if name is not None:
            argv += ["--name", name]
        if priority is not None:
            argv += ["--priority", str(int(priority))]
        env = dict(os.environ)
        if self.settings.token:
            env["WEIR_TOKEN"] = self.settings.token
        env["WEIR_HOME"] = str(self.settings.home)
        r = subprocess.run(argv + args, capture_output=True, text=True, env=env, cwd=cwd,
                           stdin=subprocess.DEVNULL, timeout=max(self.timeout, 60))
        words = r.stdout.split()
        if r.returncode != 0 or len(words) < 3 or words[0] != "job":
            msg = r.stderr.strip().replace("weir: error: ", "") or r.stdout.strip()
            if r.returncode == 3:
                raise ServerUnreachable(msg)
            raise ApiError(400 if r.returncode == 2 else 500, msg, "weir submit", " ".join(args))
        return self.job(int(words[1]))

    def jobs(self, state: Optional[str] = None, limit: Optional[int] = None) -> List[dict]:
        """The jobs, newest first (without spec and tasks); `state` filters."""
        return self.request("GET", "/jobs", params={"state": state, "limit": limit})["jobs"]

    def job(self, job_id: int) -> dict:
        """The Job with its spec, the current attempt's tasks and its `version`."""
        return self.request("GET", "/jobs/%d" % int(job_id))

    def watch(self, job_id: int, timeout: Optional[float] = None) -> Iterator[dict]:
        """Yields the Job each time it changes (a long poll: no polling), until it has ended
        and its tasks too.  Raises GetTimeoutError after `timeout` seconds."""
        deadline = None if timeout is None else time.monotonic() + timeout
        job = self.job(job_id)
        yield job
        while not (job["state"] in JOB_FINAL and all(t.get("ended_at") for t in
                                                   job.get("tasks", []))):
            wait = 30.0
            if deadline is not None:
                left = deadline - time.monotonic()
                if left <= 0:
                    raise GetTimeoutError("job %d still %s after %ss" % (job_id, job["state"],
                                                                         timeout))
                wait = min(wait, left)
            nxt = self.request("GET", "/jobs/%d" % int(job_id),
                               params={"wait": max(1, int(wait + 0.999)),
                                       "since": job["version"]}, timeout=wait + 30)
            if nxt["version"] != job["version"]:
                job = nxt
                yield job
            elif job["state"] in JOB_FINAL:
                # ended, a task's end not recorded yet: the long poll would not see it
                time.sleep(0.05)
                job = self.job(job_id)

    def wait(self, job_id: int, timeout: Optional[float] = None) -> dict:
        """Waits for the job to end and returns it; GetTimeoutError after `timeout` s."""
        job = None
        for job in self.watch(job_id, timeout):
            pass
        return job

    def state(self, job_id: int) -> str:
        """The job's state: queued, starting, running, succeeded, failed or killed."""
        return self.job(job_id)["state"]

    def tasks(self, job_id: int, attempt: Union[int, str, None] = None) -> List[dict]:
        """The tasks of the current attempt, of attempt N, or of every one ("all")."""
        return self.request("GET", "/jobs/%d/tasks" % int(job_id),
                            params={"attempt": attempt})["tasks"]

    def events(self, job_id: int) -> List[dict]:
        """The job's events in order: {"time", "kind", "message"}."""
        return self.request("GET", "/jobs/%d/events" % int(job_id))["events"]

    def kill(self, job_id: int) -> dict:
        """Kills the job (all its tasks); ApiError 409 when it had already ended."""
        return self.request("DELETE", "/jobs/%d" % int(job_id))

    def logs(self, job_id: int, role: str = "worker", index: int = 0,
             attempt: Optional[int] = None, offset: Optional[int] = None,
             length: Optional[int] = None) -> str:
        """A task's log (stdout and stderr) as it is now; offset/length read a piece."""
        return self.request("GET", "/jobs/%d/tasks/%s/%d/logs" % (int(job_id), _q(role), index),
                            params={"attempt": attempt, "offset": offset, "length": length},
                            headers={"Accept": "text/plain"}, raw=True).decode(errors="replace")

    def stream_logs(self, job_id: int, role: str = "worker", index: int = 0,
                    attempt: Optional[int] = None, offset: int = 0) -> Iterator[str]:
        """Yields a task's log as it is written, until the task has ended."""
        resp = self.request("GET", "/jobs/%d/tasks/%s/%d/logs" % (int(job_id), _q(role), index),
                            params={"attempt": attempt, "offset": offset, "follow": True},
                            headers={"Accept": "text/plain"}, timeout=None, stream=True)
        try:
            while True:
                chunk = resp.read1(65536)
                if not chunk:
                    break
                yield chunk.decode(errors="replace")
        finally:
            resp.close()

    # ---- DAGs (Airflow's stable REST API) ------------------------------------------------
    def dags(self, **params) -> List[dict]:
        """The DAGs (`limit`, `offset`, `tags`, `dag_id_pattern`, `paused`, ... as the API)."""
        return self.request("GET", "/dags", params=params)["dags"]

    def dag(self, dag_id: str) -> dict:
        return self.request("GET", "/dags/%s" % _q(dag_id))

    def pause_dag(self, dag_id: str, paused: bool = True) -> dict:
        return self.request("PATCH", "/dags/%s" % _q(dag_id), {"is_paused": bool(paused)})

    def trigger(self, dag_id: str, conf: Optional[Mapping[str, Any]] = None,
                run_id: Optional[str] = None, logical_date: Optional[str] = None) -> dict:
        """Triggers a run; `conf` overrides the DAG's params.  Returns the DAGRun."""
        body: Dict[str, Any] = {}
        if conf is not None:
            body["conf"] = dict(conf)
        if run_id is not None:
            body["dag_run_id"] = run_id
        if logical_date is not None:
            body["logical_date"] = logical_date
        return self.request("POST", "/dags/%s/dagRuns" % _q(dag_id), body)

    def dag_runs(self, dag_id: str, **params) -> List[dict]:
        return self.request("GET", "/dags/%s/dagRuns" % _q(dag_id), params=params)["dag_runs"]

    def dag_run(self, dag_id: str, run_id: str) -> dict:
        return self.request("GET", "/dags/%s/dagRuns/%s" % (_q(dag_id), _q(run_id)))

    def wait_run(self, dag_id: str, run_id: str, timeout: Optional[float] = None,
                 interval: float = 0.5) -> dict:
        """Waits until the run is `success` or `failed` and returns it."""
        deadline = None if timeout is None else time.monotonic() + timeout
        while True:
            run = self.dag_run(dag_id, run_id)
            if run["state"] in RUN_FINAL:
                return run
            if deadline is not None and time.monotonic() > deadline:
                raise GetTimeoutError("run %s of %s still %s after %ss"
                                      % (run_id, dag_id, run["state"], timeout))
            time.sleep(interval)

    def task_instances(self, dag_id: str, run_id: str, **params) -> List[dict]:
        """The run's task instances (their `state`, `try_number`, `job_id`, ...)."""
        return self.request("GET", "/dags/%s/dagRuns/%s/taskInstances" % (_q(dag_id),
                                                                          _q(run_id)),
                            params=params)["task_instances"]

    def task_states(self, dag_id: str, run_id: str) -> Dict[str, Optional[str]]:
        """{task_id: state} of a run (a mapped task's instances as task_id[i])."""
        out = {}
        for ti in self.task_instances(dag_id, run_id, limit=1000):
            key = ti["task_id"] if ti.get("map_index", -1) < 0 else "%s[%d]" % (
                ti["task_id"], ti["map_index"])
            out[key] = ti["state"]
        return out

    def task_log(self, dag_id: str, run_id: str, task_id: str, try_number: int = 1,
                 map_index: int = -1) -> str:
        """The whole log of one try of a task instance."""
        path = "/dags/%s/dagRuns/%s/taskInstances/%s/logs/%d" % (_q(dag_id), _q(run_id),
                                                                 _q(task_id), try_number)
        params = {"full_content": True}
        if map_index >= 0:
            params["map_index"] = map_index
        return self.request("GET", path, params=params, headers={"Accept": "text/plain"},
                            raw=True).decode(errors="replace")

    def clear(self, dag_id: str, run_id: str, task_ids: Optional[Sequence[str]] = None,
              only_failed: bool = True, include_downstream: bool = False,
              dry_run: bool = False) -> List[dict]:
        """Clears task instances so that they run again (not a dry run unless asked);
        returns the cleared instances."""
        body: Dict[str, Any] = {"dag_run_id": run_id, "dry_run": dry_run,
                                "only_failed": only_failed,
                                "include_downstream": include_downstream}
        if task_ids:
            body["task_ids"] = list(task_ids)
        return self.request("POST", "/dags/%s/clearTaskInstances" % _q(dag_id),
                            body)["task_instances"]

    def import_errors(self) -> List[dict]:
        return self.request("GET", "/importErrors")["import_errors"]

    # ---- datasets (Airflow's dataset routes) ---------------------------------------------
    def datasets(self, **params) -> List[dict]:
        """The datasets the DAG files name (`uri_pattern`, `dag_ids`, `limit`, ...), each with
        its `consuming_dags` and `producing_tasks`."""
        return self.request("GET", "/datasets", params=params)["datasets"]

    def dataset(self, uri: str) -> dict:
        return self.request("GET", "/datasets/%s" % _q(uri))

    def dataset_events(self, **params) -> List[dict]:
        """Dataset events (`dataset_id`, `source_dag_id`, `source_run_id`, ... as the API)."""
        return self.request("GET", "/datasets/events", params=params)["dataset_events"]

    def announce_dataset(self, uri: str, extra: Optional[Mapping[str, Any]] = None) -> dict:
        """Tells the server the dataset was updated (Airflow's create_dataset_event): the
        DAGs scheduled on it that are now due start.  Returns the DatasetEvent, with the
        runs it started in `created_dagruns`."""
        body: Dict[str, Any] = {"dataset_uri": uri}
        if extra is not None:
            body["extra"] = dict(extra)
        return self.request("POST", "/datasets/events", body)

    def upstream_dataset_events(self, dag_id: str, run_id: str) -> List[dict]:
        """The dataset events a dataset-triggered run consumed."""
        return self.request("GET", "/dags/%s/dagRuns/%s/upstreamDatasetEvents"
                            % (_q(dag_id), _q(run_id)))["dataset_events"]
