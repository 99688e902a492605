"""`import ray`, as weir runs it: weir's Ray-compatible module (weir.compat.ray) under
Ray's name.  This folder's parent is put first on a program's path by `weir run` and
`python3 -m weir.run`; see docs/ray.md."""

from weir.compat.ray import *  # noqa: F401,F403
from weir.compat.ray import __all__, __version__  # noqa: F401
from . import actor  # noqa: F401,E402  (ray.actor.exit_actor() after `import ray`)
