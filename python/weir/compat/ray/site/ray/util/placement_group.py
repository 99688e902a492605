"""`import ray.util.placement_group`, as weir runs it: weir.compat.ray.util.placement_group."""

from weir.compat.ray.util.placement_group import *  # noqa: F401,F403
from weir.compat.ray.util.placement_group import __all__  # noqa: F401
