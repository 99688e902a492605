"""weir.Client: the whole HTTP API of a weir server, jobs and DAGs (docs/api.md).

The server and token come from where the `weir` CLI finds them (weir._config).  Every method
returns the API's JSON as Python objects; an error answer raises ApiError (ResourceError for
a 422) carrying the API's message and status.  Beside the methods that answer dicts, a few
answer the typed objects of weir.types: get_job, list_jobs, list_tasks, get_dag_run,
list_dag_runs, list_task_instances.

The routes are grouped by concern: _http.py (the connection, `request`), jobs.py, dags.py,
datasets.py.
"""

from .dags import RUN_FINAL, DagRoutes
from .datasets import DatasetRoutes
from .jobs import JOB_FINAL, JobRoutes

__all__ = ["Client", "JOB_FINAL", "RUN_FINAL"]


class Client(JobRoutes, DagRoutes, DatasetRoutes):
    """A connection to one weir server.

    >>> c = weir.Client()                      # WEIR_SERVER, WEIR_TOKEN, ~/.weir/token
    >>> job = c.submit({"name": "hi", "roles": {"worker": {"command": "echo hi"}}})
    >>> c.wait(job["id"], timeout=60)["state"]
    'succeeded'

    One Client may be used from several threads: each thread keeps its own connection.
    """
