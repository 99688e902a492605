"""`import ray.exceptions`, as weir runs it: weir.compat.ray.exceptions under Ray's name."""

from weir.compat.ray.exceptions import *  # noqa: F401,F403
from weir.compat.ray.exceptions import __all__  # noqa: F401
