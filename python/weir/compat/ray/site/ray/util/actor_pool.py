"""`import ray.util.actor_pool`, as weir runs it: weir.compat.ray.util.actor_pool."""

from weir.compat.ray.util.actor_pool import *  # noqa: F401,F403
from weir.compat.ray.util.actor_pool import __all__  # noqa: F401
