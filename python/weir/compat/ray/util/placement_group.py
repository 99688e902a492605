"""ray.util.placement_group: refused with what to do instead (weir reserves a call's
resources with its worker job; a gang of bundles is not mapped onto weir's gangs yet)."""

from typing import Any, NoReturn

WHY = ("ray.util.placement_group: not supported by weir yet (each call's worker job holds "
       "its own cores and GPUs; for workers that start together use weir.train(workers=N) "
       "or a gang job); the program's calls run without it")


def placement_group(*args: Any, **kwargs: Any) -> NoReturn:
    raise NotImplementedError(WHY)


def remove_placement_group(*args: Any, **kwargs: Any) -> NoReturn:
    raise NotImplementedError(WHY)


def get_current_placement_group() -> None:
    """None: a weir call never runs in a placement group."""
    return None


__all__ = ["placement_group", "remove_placement_group", "get_current_placement_group"]
