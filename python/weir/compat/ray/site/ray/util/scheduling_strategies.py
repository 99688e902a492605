"""`import ray.util.scheduling_strategies`, as weir runs it: weir.compat.ray.util.scheduling_strategies."""

from weir.compat.ray.util.scheduling_strategies import *  # noqa: F401,F403
from weir.compat.ray.util.scheduling_strategies import __all__  # noqa: F401
