"""Placement groups and scheduling strategies in Ray programs (docs/ray.md "Placement
groups", docs/internals/calls.md "Placement groups"), with `weir run` against a real
server: a group is one weir job whose tasks are its bundles (a gang), holding their cores
so that the server's available resources drop; tasks and actors placed in a bundle run as
children of the bundle's process (inside its reservation, no job of their own); a call
that no bundle could hold, a bundle the node could never hold and a hard node affinity to
another node are refused at once; capture_child_tasks; removing the group ends its
actors; nothing is left after the program."""

import os
import subprocess

from conftest import WEIR_BIN, wait_for, wait_no_procs
from test_ray_programs import cli_describe, jobs, write
from test_ray_warm import WORKER_MARK, run_ok



def test_a_placement_group_holds_its_bundles_and_runs_its_tasks_and_actors(server, tmp_path):
    prog = write(tmp_path, "pg.py", """\
        import os
        import ray
        from ray.util.placement_group import (placement_group, placement_group_table,
                                              remove_placement_group, get_placement_group)
        from ray.util.scheduling_strategies import PlacementGroupSchedulingStrategy

        ray.init()
        free = ray.available_resources()["CPU"]
        pg = placement_group([{"CPU": 2}, {"CPU": 1, "GPU": 1}], strategy="PACK",
                             name="training")
        ray.get(pg.ready())
        print("ready", pg.wait(30), placement_group_table(pg)["state"], pg.bundle_count)
        print("held", free - ray.available_resources()["CPU"])
        print("by name", get_placement_group("training") == pg)

        @ray.remote(num_cpus=1)
        def where():
            return os.environ.get("WEIR_JOB_ID"), os.getppid()

        @ray.remote(num_cpus=1)
        def parent():
            # captured: the child runs in the group too
            return ray.get(where.remote()), ray.util.get_current_placement_group() is not None

        @ray.remote(num_gpus=1)
        class Trainer:
            def info(self):
                return os.environ.get("WEIR_JOB_ID"), os.environ.get("CUDA_VISIBLE_DEVICES")

        in0 = PlacementGroupSchedulingStrategy(pg, placement_group_bundle_index=0)
        got = ray.get([where.options(scheduling_strategy=in0).remote() for _ in range(6)])
        job = placement_group_table(pg)["weir_job_id"]
        # all in bundle 0: children of its one process
        print("tasks in the group's job", {j for j, _ in got} == {str(job)},
              len({p for _, p in got}))
        old_api = ray.get(where.options(placement_group=pg).remote())
        print("old options", old_api[0] == str(job))
        cap = PlacementGroupSchedulingStrategy(pg, placement_group_capture_child_tasks=True)
        (child, _), current = ray.get(parent.options(scheduling_strategy=cap).remote())
        print("captured", child == str(job), current)
        t = Trainer.options(scheduling_strategy=PlacementGroupSchedulingStrategy(pg, 1)
                            ).remote()
        tjob, gpus = ray.get(t.info.remote())
        print("actor in bundle 1", tjob == str(job), gpus is not None)
        outside = ray.get(where.remote())
        print("outside", outside[0] != str(job))
        try:
            where.options(num_cpus=3, scheduling_strategy=in0).remote()
        except ValueError as e:
            print("too big for the bundle", "could never run there" in str(e))
        remove_placement_group(pg)
        try:
            ray.get(t.info.remote())
        except ray.exceptions.RayActorError as e:
            print("actor ended", "placement group was removed" in str(e))
        try:
            where.options(scheduling_strategy=in0).remote()
        except ValueError as e:
            print("removed", "was removed" in str(e))
        print("table", placement_group_table(pg)["state"])
        """)
    r = run_ok(server, prog)
    assert r.stdout.splitlines() == [
        "ready True CREATED 2", "held 3.0", "by name True",
        "tasks in the group's job True 1", "old options True", "captured True True",
        "actor in bundle 1 True True", "outside True", "too big for the bundle True",
        "actor ended True", "removed True", "table REMOVED"], cli_describe(r)
    # the group is one job of two tasks (a gang), killed by remove_placement_group
    (job,) = [server.job(j["id"]) for j in jobs(server) if j["name"] == "training"]
    assert sorted(job["spec"]["roles"]) == ["bundle0", "bundle1"], job
    assert server.wait_job(job["id"], timeout=60)["state"] == "killed"
    # the calls placed in it are recorded under its job (its workers have none of their own)
    def recorded():
        calls = server.api("GET", "/api/v1/jobs/%d/calls" % job["id"])[1]["calls"]
        return {c["name"] for c in calls if c["state"] == "succeeded"}
    wait_for(lambda: {"where", "parent", "Trainer.__init__"} <= recorded(), 30,
             "the group's calls recorded")
    assert wait_no_procs(marker=WORKER_MARK, timeout=30) == {}


def test_what_can_never_be_placed_is_refused_at_once(server, tmp_path):
    prog = write(tmp_path, "never.py", """\
        import ray
        from ray.util.placement_group import placement_group
        from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

        @ray.remote
        def node():
            return ray.get_runtime_context().get_node_id()

        here = ray.nodes()[0]["NodeID"]
        print("affinity", ray.get(node.options(scheduling_strategy=NodeAffinitySchedulingStrategy(
            here, soft=False)).remote()) == here)
        print("soft", ray.get(node.options(scheduling_strategy=NodeAffinitySchedulingStrategy(
            "elsewhere", soft=True)).remote()) == here)
        print("spread", ray.get(node.options(scheduling_strategy="SPREAD").remote()) == here)
        try:
            node.options(scheduling_strategy=NodeAffinitySchedulingStrategy("elsewhere",
                                                                            soft=False)).remote()
        except ValueError as e:
            print("hard affinity", "no such node" in str(e))
        try:
            placement_group([{"CPU": 64}])
        except ray.exceptions.RayError as e:
            raise
        except Exception as e:
            print("too big", type(e).__name__, "cannot hold" in str(e))
        try:
            placement_group([{"CPU": 1}, {"CPU": 1}], strategy="STRICT_SPREAD")
        except ValueError as e:
            print("strict spread", "could never be placed" in str(e))
        try:
            placement_group([{"TPU": 1}])
        except ValueError as e:
            print("custom", "no custom resources" in str(e))
        pg = placement_group([{"CPU": 1}, {"CPU": 1}], strategy="STRICT_PACK")
        print("strict pack", pg.wait(60))
        """)
    r = run_ok(server, prog)
    assert r.stdout.splitlines() == [
        "affinity True", "soft True", "spread True", "hard affinity True",
        "too big ResourceError True", "strict spread True", "custom True",
        "strict pack True"], cli_describe(r)
    # the group left with its program (its bundles see the program's socket close)
    groups = [j for j in jobs(server) if j["name"] == "placement-group"]
    assert len(groups) == 1, groups
    assert server.wait_job(groups[0]["id"], timeout=60)["state"] in ("succeeded", "killed")


def test_a_placement_group_on_the_private_server(tmp_path):
    """ray.init(address="local"): the group is a job of the program's own server, its
    tasks run in its bundle, and nothing of it is left after the program."""
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    prog = write(tmp_path, "local.py", """\
        import os
        import ray
        from ray.util.placement_group import placement_group
        from ray.util.scheduling_strategies import PlacementGroupSchedulingStrategy
        ray.init(address="local", num_cpus=4)
        pg = placement_group([{"CPU": 2}, {"CPU": 2}], strategy="SPREAD")
        print("ready", pg.wait(60))
        print("left", ray.available_resources().get("CPU", 0.0))  # none left: no key, as in Ray

        @ray.remote
        def f(x):
            return x * x, os.environ.get("WEIR_RAY_PG") is not None

        s = PlacementGroupSchedulingStrategy(pg)
        print(ray.get([f.options(scheduling_strategy=s).remote(i) for i in range(4)]))
        """)
    env = {k: v for k, v in os.environ.items() if k not in ("WEIR_SERVER", "WEIR_TOKEN",
                                                              "PYTHONPATH")}
    env.update(TMPDIR=str(tmp), WEIR_HOME=str(tmp_path / "no-home"))
    r = subprocess.run([WEIR_BIN, "run", str(prog)], capture_output=True, text=True,
                       env=env, timeout=180, cwd=str(tmp_path), stdin=subprocess.DEVNULL)
    assert r.returncode == 0, cli_describe(r)
    assert r.stdout.splitlines() == ["ready True", "left 0.0",
                                     "[(0, True), (1, True), (4, True), (9, True)]"], \
        cli_describe(r)
    assert wait_no_procs(marker=str(tmp), cwd_prefix=str(tmp), timeout=30) == {}
    assert list(tmp.iterdir()) == [], list(tmp.iterdir())
