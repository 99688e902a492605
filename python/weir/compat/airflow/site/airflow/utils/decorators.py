"""airflow.utils.decorators: `apply_defaults`, which operators of Airflow 1.10 put on their
`__init__`. Airflow 2 applies `default_args` itself and keeps the decorator as a no-op; so
does weir."""

import warnings
from typing import Any, Callable


def apply_defaults(func: Callable[..., Any]) -> Callable[..., Any]:
    """The function itself (Airflow 2 warns that the decorator is no longer needed)."""
    warnings.warn("apply_defaults is deprecated and no longer needed", DeprecationWarning,
                  stacklevel=2)
    return func


__all__ = ["apply_defaults"]
