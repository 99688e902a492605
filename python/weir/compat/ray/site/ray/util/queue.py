"""`import ray.util.queue`, as weir runs it: weir.compat.ray.util.queue."""

from weir.compat.ray.util.queue import *  # noqa: F401,F403
from weir.compat.ray.util.queue import __all__  # noqa: F401
