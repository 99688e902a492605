"""The pieces of Ray's behaviour that tests/system/test_ray_conformance.py found missing,
checked without a server: an unpicklable argument named, num_returns not matching what a
task returned (Ray's RayTaskError, also a ValueError), ray.wait on an empty list, Ray's other
exception classes, the runtime context's older names and an actor's view of itself."""

import threading

import pytest

from weir.compat import ray
from weir.compat.ray import actors as ray_actors
from weir.compat.ray import api as ray_api
from weir.errors import SerializationError
from weir.remote import objects, ray_ids


def test_an_unpicklable_argument_is_named_by_position_or_keyword():
    lock = threading.Lock()
    with pytest.raises(SerializationError, match=r"^f\(\): argument 1 \(<unlocked _thread"
                       r"\.lock.*cannot pickle '_thread\.lock'.*not made$") as e:
        objects.dumps_args((1, lock), {}, "f")
    assert isinstance(e.value, TypeError)  # as Ray's "Could not serialize the argument"
    with pytest.raises(SerializationError, match=r"argument key= \("):
        objects.dumps_args((1,), {"key": lock}, "f")
    assert objects.dumps_args((1,), {"k": 2}, "f")


def test_num_returns_not_matching_is_the_tasks_value_error():
    call = ray_api._Ready((1, 2, 3), "three")
    parts = [ray_actors._Part(call, i, 2) for i in range(2)]
    with pytest.raises(ValueError, match=r"Task returned 3 objects, but num_returns=2\.") as e:
        ray.get(parts[0])
    assert isinstance(e.value, ray.exceptions.RayTaskError)
    with pytest.raises(ray.exceptions.RayTaskError, match=r"returned 1 \(int\) objects"):
        ray.get(ray_actors._Part(ray_api._Ready(7, "one"), 0, 2))
    ok = [ray_actors._Part(ray_api._Ready((4, 5), "two"), i, 2) for i in range(2)]
    assert ray.get(ok) == [4, 5]


def test_wait_on_nothing_and_its_refusals():
    assert ray.wait([]) == ([], [])
    assert ray.wait([], num_returns=0) == ([], [])  # as Ray: before num_returns is checked
    ref = ray_api._Ready(1, "one")
    with pytest.raises(ValueError, match="timeout"):
        ray.wait([ref], timeout=-1)
    with pytest.raises(ValueError, match="num_returns"):
        ray.wait([ref], num_returns=2)
    assert ray.wait([ref], timeout=0) == ([ref], [])


def test_rays_other_exception_classes_are_there():
    e = ray.exceptions
    for name in ("RuntimeEnvSetupError", "ObjectStoreFullError", "ActorUnschedulableError",
                 "TaskUnschedulableError", "LocalRayletDiedError", "CrossLanguageError",
                 "PendingCallsLimitExceeded", "ActorUnavailableError", "AsyncioActorExit"):
        assert issubclass(getattr(e, name), e.RayError), name
    for name in ("OwnerDiedError", "ObjectFetchTimedOutError",
                 "ObjectReconstructionFailedError"):
        assert issubclass(getattr(e, name), e.ObjectLostError), name
    assert set(e.__all__) <= set(dir(e))


def test_the_runtime_context_of_an_actor_and_its_older_names(monkeypatch):
    for k in ("WEIR_WARM_DIR", "WEIR_WARM_ACTOR", "WEIR_WARM_ACTOR_NAME",
              "WEIR_WARM_ACTOR_RESTARTS", "WEIR_JOB_ID"):
        monkeypatch.delenv(k, raising=False)
    c = ray.get_runtime_context()
    assert c.get_actor_name() is None and c.actor_id is None
    assert c.was_current_actor_reconstructed is False
    assert c.task_id is None and c.node_id == c.get_node_id()
    monkeypatch.setenv("WEIR_WARM_ACTOR", "tag-3")
    monkeypatch.setenv("WEIR_WARM_ACTOR_NAME", "store")
    monkeypatch.setenv("WEIR_WARM_ACTOR_RESTARTS", "0")
    assert (c.get_actor_name(), c.actor_id, c.was_current_actor_reconstructed) == \
        ("store", ray_ids.actor_hex("tag", 3), False)
    monkeypatch.setenv("WEIR_WARM_ACTOR_RESTARTS", "1")
    assert c.was_current_actor_reconstructed is True
    monkeypatch.setenv("WEIR_WARM_ACTOR_NAME", "")
    assert c.get_actor_name() is None  # an actor without name=


def test_get_refuses_what_is_no_ref_with_rays_classes():
    for bad in (5, "x", {"a": 1}):
        with pytest.raises(ValueError, match="expected an ObjectRef or a list"):
            ray.get(bad)
    with pytest.raises(TypeError, match="expected ObjectRefs, got 5"):
        ray.get([ray_api._Ready(1, "one"), 5])


def test_a_ref_is_a_concurrent_future_and_awaitable():
    import asyncio
    ref = ray_api._Ready(3, "three")
    assert ref.future().result(timeout=10) == 3

    async def main():
        return await ray_api._Ready(4, "four")
    assert asyncio.run(main()) == 4
    bad = ray_actors._Part(ray_api._Ready(5, "five"), 0, 2)
    with pytest.raises(ray.exceptions.RayTaskError):  # Ray's error, through ray.get
        bad.future().result(timeout=10)


def test_current_actor_is_an_actors_only(monkeypatch):
    monkeypatch.delenv("WEIR_WARM_ACTOR", raising=False)
    with pytest.raises(RuntimeError, match="not an actor"):
        ray.get_runtime_context().current_actor
    monkeypatch.delenv("WEIR_JOB_ID", raising=False)
    assert ray.get_runtime_context().get_assigned_resources() == {}  # the program's
