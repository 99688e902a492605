"""`import ray.util`, as weir runs it: weir.compat.ray.util under Ray's name."""

# Ray's submodules first: `ray.util.placement_group` stays the function after the star
# import below, as in Ray, and `import ray.util.queue` finds its module
from . import actor_pool as _ap, placement_group as _pg, queue as _q  # noqa: F401
from . import multiprocessing as _mp, state as _st  # noqa: F401
from . import scheduling_strategies as _ss  # noqa: F401
from weir.compat.ray.util import *  # noqa: F401,F403,E402
from weir.compat.ray.util import __all__  # noqa: F401,E402
