"""weir.Client's workflow routes (Airflow's stable REST API): DAGs, runs, task instances,
their logs, clearing; the typed answers beside the dicts (get_dag_run, list_dag_runs,
list_task_instances)."""

import time
from typing import Any, Dict, List, Mapping, Optional, Sequence

from ..errors import GetTimeoutError
from ..types import DagRun, DagRunState, TaskInstance, instance_key
from ._http import HttpClient, _q

# the states a DAG run ends in, by name
RUN_FINAL = tuple(s.value for s in DagRunState if s.is_final)


class DagRoutes(HttpClient):
    """The DAG routes (docs/api.md, "Workflows"); weir.Client has them all."""

    def dags(self, **params: Any) -> List[Dict[str, Any]]:
        """The DAGs (`limit`, `offset`, `tags`, `dag_id_pattern`, `paused`, ... as the API)."""
        return self._list("dags", "GET", "/dags", params=params)

    def dag(self, dag_id: str) -> Dict[str, Any]:
        return self._obj("GET", "/dags/%s" % _q(dag_id))

    def pause_dag(self, dag_id: str, paused: bool = True) -> Dict[str, Any]:
        return self._obj("PATCH", "/dags/%s" % _q(dag_id), {"is_paused": bool(paused)})

    def trigger(self, dag_id: str, conf: Optional[Mapping[str, Any]] = None,
                run_id: Optional[str] = None,
                logical_date: Optional[str] = None) -> Dict[str, Any]:
        """Triggers a run; `conf` overrides the DAG's params.  Returns the DAGRun."""
        body: Dict[str, Any] = {}
        if conf is not None:
            body["conf"] = dict(conf)
        if run_id is not None:
            body["dag_run_id"] = run_id
        if logical_date is not None:
            body["logical_date"] = logical_date
        return self._obj("POST", "/dags/%s/dagRuns" % _q(dag_id), body)

    def dag_runs(self, dag_id: str, **params: Any) -> List[Dict[str, Any]]:
        return self._list("dag_runs", "GET", "/dags/%s/dagRuns" % _q(dag_id), params=params)

    def dag_run(self, dag_id: str, run_id: str) -> Dict[str, Any]:
        return self._obj("GET", "/dags/%s/dagRuns/%s" % (_q(dag_id), _q(run_id)))

    def wait_run(self, dag_id: str, run_id: str, timeout: Optional[float] = None,
                 interval: float = 0.5) -> Dict[str, Any]:
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

    def task_instances(self, dag_id: str, run_id: str, **params: Any) -> List[Dict[str, Any]]:
        """The run's task instances (their `state`, `try_number`, `job_id`, ...)."""
        return self._list("task_instances", "GET", "/dags/%s/dagRuns/%s/taskInstances"
                          % (_q(dag_id), _q(run_id)), params=params)

    def task_states(self, dag_id: str, run_id: str) -> Dict[str, Optional[str]]:
        """{task_id: state} of a run (a mapped task's instances as task_id[i])."""
        out = {}
        for ti in self.task_instances(dag_id, run_id, limit=1000):
            out[instance_key(ti["task_id"], ti.get("map_index", -1))] = ti["state"]
        return out

    def task_log(self, dag_id: str, run_id: str, task_id: str, try_number: int = 1,
                 map_index: int = -1) -> str:
        """The whole log of one try of a task instance."""
        path = "/dags/%s/dagRuns/%s/taskInstances/%s/logs/%d" % (_q(dag_id), _q(run_id),
                                                                 _q(task_id), try_number)
        params: Dict[str, Any] = {"full_content": True}
        if map_index >= 0:
            params["map_index"] = map_index
        return self._text(path, params)

    def clear(self, dag_id: str, run_id: str, task_ids: Optional[Sequence[str]] = None,
              only_failed: bool = True, include_downstream: bool = False,
              dry_run: bool = False) -> List[Dict[str, Any]]:
        """Clears task instances so that they run again (not a dry run unless asked);
        returns the cleared instances."""
        body: Dict[str, Any] = {"dag_run_id": run_id, "dry_run": dry_run,
                                "only_failed": only_failed,
                                "include_downstream": include_downstream}
        if task_ids:
            body["task_ids"] = list(task_ids)
        return self._list("task_instances", "POST",
                          "/dags/%s/clearTaskInstances" % _q(dag_id), body)

    def import_errors(self) -> List[Dict[str, Any]]:
        return self._list("import_errors", "GET", "/importErrors")

    # ---- typed answers --------------------------------------------------------------------
    def get_dag_run(self, dag_id: str, run_id: str) -> DagRun:
        """dag_run(), as a weir.types.DagRun."""
        return DagRun.from_json(self.dag_run(dag_id, run_id))

    def list_dag_runs(self, dag_id: str, **params: Any) -> List[DagRun]:
        """dag_runs(), each a weir.types.DagRun."""
        return [DagRun.from_json(r) for r in self.dag_runs(dag_id, **params)]

    def list_task_instances(self, dag_id: str, run_id: str,
                            **params: Any) -> List[TaskInstance]:
        """task_instances(), each a weir.types.TaskInstance."""
        return [TaskInstance.from_json(t) for t in self.task_instances(dag_id, run_id,
                                                                       **params)]
