"""Another DAG's runs as a running task reads them: an Airflow ExternalTaskSensor whose
`execution_date_fn` runs in Python asks weir's server for the other DAG's runs at the dates
the function gave (POST /api/v1/launch/dagRuns), with the read key the server gave this task
(WEIR_TASK_READ_KEY: its DAG processor entry asked for one with WEIR_TASK_READS=dag_runs).
The key opens that one read, for this task alone; it is no API credential."""

from __future__ import annotations

import datetime as _dt
import json
import os
import ssl
import urllib.error
import urllib.request
from typing import Any, Dict, List, Optional

ROUTE = "/api/v1/launch/dagRuns"


class ReadError(Exception):
    """The read could not be made or was refused; the message says why."""


def iso_utc(value: Any) -> str:
    """A date as the server reads it: UTC, milliseconds, `Z` (a naive one is UTC)."""
    if not isinstance(value, _dt.datetime):
        raise ReadError("execution_date_fn returned %r: expected a datetime or a list of "
                        "them" % (value,))
    if value.tzinfo is not None:
        value = value.astimezone(_dt.timezone.utc).replace(tzinfo=None)
    return value.strftime("%Y-%m-%dT%H:%M:%S.") + "%03dZ" % (value.microsecond // 1000)


def _tls() -> ssl.SSLContext:
    ctx = ssl.create_default_context()
    ca = os.environ.get("WEIR_CA_FILE")
    if ca:
        ctx.load_verify_locations(cafile=ca)
        ctx.verify_flags |= ssl.VERIFY_X509_PARTIAL_CHAIN
    return ctx


def read_runs(dag_id: str, dates: List[Any], env: Optional[Dict[str, str]] = None,
              timeout: float = 30.0) -> Dict[str, Any]:
    """DAG `dag_id`'s runs at `dates`: {"loaded", "task_ids", "runs": [{"logical_date",
    "state" ("" without a run), "task_instances": [{"task_id", "state"}]}]}."""
    env = dict(os.environ) if env is None else env
    key = env.get("WEIR_TASK_READ_KEY")
    server = env.get("WEIR_SERVER")
    if not key or not server:
        raise ReadError("this task was given no read key (WEIR_TASK_READ_KEY) or no server "
                        "(WEIR_SERVER): weir gives one to a task its DAG processor marked "
                        "(an ExternalTaskSensor with execution_date_fn) when it runs on the "
                        "server")
    body = {"job": int(env.get("WEIR_JOB_ID", "0")), "role": env.get("WEIR_ROLE", ""),
            "index": int(env.get("WEIR_TASK_INDEX", "0")),
            "attempt": int(env.get("WEIR_ATTEMPT", "0")), "dag_id": str(dag_id),
            "logical_dates": [iso_utc(d) for d in dates]}
    url = server.rstrip("/") + ROUTE
    req = urllib.request.Request(url, data=json.dumps(body).encode(), method="POST",
                                 headers={"Authorization": "Bearer " + key,
                                          "Content-Type": "application/json"})
    try:
        ctx = _tls() if url.startswith("https://") else None
        with urllib.request.urlopen(req, timeout=timeout, context=ctx) as r:
            answer: Dict[str, Any] = json.loads(r.read().decode())
            return answer
    except urllib.error.HTTPError as e:
        text = e.read().decode(errors="replace")
        try:
            text = json.loads(text).get("detail") or json.loads(text).get("error") or text
        except (ValueError, AttributeError):
            pass
        raise ReadError("reading DAG %s's runs: HTTP %d: %s" % (dag_id, e.code, text)) from e
    except (OSError, ValueError) as e:
        raise ReadError("reading DAG %s's runs at %s: %s" % (dag_id, url, e)) from e
