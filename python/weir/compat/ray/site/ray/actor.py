"""`import ray.actor`, as weir runs it: the actor classes and ray.actor.exit_actor() of
weir.compat.ray.actors."""

from weir.compat.ray.actors import (ActorClass, ActorHandle, ActorMethod,  # noqa: F401
                                    exit_actor, method)

__all__ = ["ActorClass", "ActorHandle", "ActorMethod", "exit_actor", "method"]
