"""ray.util: ActorPool (weir/compat/ray/actors.py)."""

from ..actors import ActorPool

__all__ = ["ActorPool"]
