"""weir.Client's job routes: submit (a spec, a spec file, TonY's flags), read, follow,
kill, logs; the typed answers beside the dicts (get_job, list_jobs, list_tasks)."""

import os
import shutil
import subprocess
import time
from typing import Any, Dict, Iterator, List, Mapping, Optional, Union

from ..errors import ApiError, GetTimeoutError, ServerUnreachable, WeirError
from ..types import Job, JobState, Task
from ._http import HttpClient, PathLike, _q

# the states a job ends in, by name (as the API's "state" reads)
JOB_FINAL = tuple(s.value for s in JobState if s.is_final)


class JobRoutes(HttpClient):
    """The job routes (docs/api.md); weir.Client has them all."""

    def submit(self, spec: Union[Mapping[str, Any], PathLike], name: Optional[str] = None,
               priority: Optional[int] = None) -> Dict[str, Any]:
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
            return self._obj("POST", "/jobs", body)
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
                    cwd: Optional[PathLike] = None) -> Dict[str, Any]:
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

    def _submit_cli(self, args: List[str], name: Optional[str], priority: Optional[int],
                    cwd: Optional[PathLike] = None) -> Dict[str, Any]:
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

    def jobs(self, state: Optional[str] = None,
             limit: Optional[int] = None) -> List[Dict[str, Any]]:
        """The jobs, newest first (without spec and tasks); `state` filters."""
        return self._list("jobs", "GET", "/jobs", params={"state": state, "limit": limit})

    def job(self, job_id: int) -> Dict[str, Any]:
        """The Job with its spec, the current attempt's tasks and its `version`."""
        return self._obj("GET", "/jobs/%d" % int(job_id))

    def watch(self, job_id: int,
              timeout: Optional[float] = None) -> Iterator[Dict[str, Any]]:
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
            nxt = self._obj("GET", "/jobs/%d" % int(job_id),
                            params={"wait": max(1, int(wait + 0.999)),
                                    "since": job["version"]}, timeout=wait + 30)
            if nxt["version"] != job["version"]:
                job = nxt
                yield job
            elif job["state"] in JOB_FINAL:
                # ended, a task's end not recorded yet: the long poll would not see it
                time.sleep(0.05)
                job = self.job(job_id)

    def wait(self, job_id: int, timeout: Optional[float] = None) -> Dict[str, Any]:
        """Waits for the job to end and returns it; GetTimeoutError after `timeout` s."""
        job: Dict[str, Any] = {}
        for job in self.watch(job_id, timeout):
            pass
        return job

    def state(self, job_id: int) -> str:
        """The job's state: queued, starting, running, succeeded, failed or killed."""
        return str(self.job(job_id)["state"])

    def tasks(self, job_id: int,
              attempt: Union[int, str, None] = None) -> List[Dict[str, Any]]:
        """The tasks of the current attempt, of attempt N, or of every one ("all")."""
        return self._list("tasks", "GET", "/jobs/%d/tasks" % int(job_id),
                          params={"attempt": attempt})

    def events(self, job_id: int) -> List[Dict[str, Any]]:
        """The job's events in order: {"time", "kind", "message"}."""
        return self._list("events", "GET", "/jobs/%d/events" % int(job_id))

    def calls(self, job_id: int, after: int = 0,
              limit: Optional[int] = None) -> Dict[str, Any]:
        """A warm worker's calls (docs/internals/calls.md): {"calls": [{"id", "name",
        "state", "tries", "started_at", "ended_at", "duration_ms", "error"}], "counts":
        {state: n}}, the calls past id `after` in order, at most `limit` (1000)."""
        return self._obj("GET", "/jobs/%d/calls" % int(job_id),
                         params={"after": after or None, "limit": limit})

    def record_calls(self, job_id: int, calls: List[Dict[str, Any]]) -> Dict[str, Any]:
        """Records a batch of a warm worker's calls (at most 1000): {"received",
        "recorded"}; what the Ray module's pool sends (weir/remote/warm.py)."""
        return self._obj("POST", "/jobs/%d/calls" % int(job_id), {"calls": calls})

    def kill(self, job_id: int) -> Dict[str, Any]:
        """Kills the job (all its tasks); ApiError 409 when it had already ended."""
        return self._obj("DELETE", "/jobs/%d" % int(job_id))

    def logs(self, job_id: int, role: str = "worker", index: int = 0,
             attempt: Optional[int] = None, offset: Optional[int] = None,
             length: Optional[int] = None) -> str:
        """A task's log (stdout and stderr) as it is now; offset/length read a piece."""
        return self._text("/jobs/%d/tasks/%s/%d/logs" % (int(job_id), _q(role), index),
                          {"attempt": attempt, "offset": offset, "length": length})

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

    # ---- typed answers --------------------------------------------------------------------
    def get_job(self, job_id: int) -> Job:
        """job(), as a weir.types.Job."""
        return Job.from_json(self.job(job_id))

    def list_jobs(self, state: Optional[str] = None, limit: Optional[int] = None) -> List[Job]:
        """jobs(), each a weir.types.Job (without spec and tasks)."""
        return [Job.from_json(j) for j in self.jobs(state, limit)]

    def list_tasks(self, job_id: int, attempt: Union[int, str, None] = None) -> List[Task]:
        """tasks(), each a weir.types.Task."""
        return [Task.from_json(t) for t in self.tasks(job_id, attempt)]
