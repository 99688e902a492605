"""`import ray.util`, as weir runs it: weir.compat.ray.util under Ray's name."""

from weir.compat.ray.util import *  # noqa: F401,F403
from weir.compat.ray.util import __all__  # noqa: F401
