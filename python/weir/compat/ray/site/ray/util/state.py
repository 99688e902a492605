"""`import ray.util.state`, as weir runs it: weir.compat.ray.util.state."""

from weir.compat.ray.util.state import *  # noqa: F401,F403
from weir.compat.ray.util.state import __all__  # noqa: F401
