"""`import ray.util.multiprocessing`, as weir runs it: weir.compat.ray.util.multiprocessing."""

from weir.compat.ray.util.multiprocessing import *  # noqa: F401,F403
from weir.compat.ray.util.multiprocessing import __all__  # noqa: F401
