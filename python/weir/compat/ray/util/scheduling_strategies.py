"""ray.util.scheduling_strategies: Ray's strategies, accepted as scheduling_strategy=
(weir's server places every call itself: docs/ray.md)."""

from typing import Any, Optional


class NodeAffinitySchedulingStrategy:
    def __init__(self, node_id: str, soft: bool, _spill_on_unavailable: bool = False,
                 _fail_on_unavailable: bool = False) -> None:
        self.node_id = node_id
        self.soft = soft


class PlacementGroupSchedulingStrategy:
    def __init__(self, placement_group: Any, placement_group_bundle_index: int = -1,
                 placement_group_capture_child_tasks: Optional[bool] = None) -> None:
        self.placement_group = placement_group
        self.placement_group_bundle_index = placement_group_bundle_index
        self.placement_group_capture_child_tasks = placement_group_capture_child_tasks


__all__ = ["NodeAffinitySchedulingStrategy", "PlacementGroupSchedulingStrategy"]
