"""The operators weir refuses with an import error that says why: those that run a task in a
container (Docker, a Kubernetes pod).  weir starts processes on its agents; it has no
container runtime to hand a task to (docs/airflow.md, "Where weir differs")."""

from __future__ import annotations

_WHY = ("weir runs no containers (no Docker, no Kubernetes pods): it starts a task as a "
        "process on its agents; use @task.virtualenv / PythonVirtualenvOperator or "
        "@task.external_python for the task's own packages, or a BashOperator that runs the "
        "program")


def no_containers(what: str) -> ImportError:
    """The error for an operator that runs its task in a container."""
    return ImportError("%s: not supported: %s" % (what, _WHY))
