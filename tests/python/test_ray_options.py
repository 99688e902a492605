"""Ray's option names mapped onto weir's (weir/remote/ray_names.py), as ray.remote and
@weir.remote use them; ray.remote's refusals; the exceptions' classes; `import ray` through
the compat folder and `python3 -m weir.run`.  No server."""

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

import weir
from conftest import REPO
from weir.compat import ray
from weir.errors import RemoteError
from weir.remote import functions, ray_names


def test_resources_are_rounded_up_to_what_weir_counts():
    m = ray_names.from_ray
    assert m({"num_cpus": 2, "num_gpus": 1}) == {"cpus": 2, "gpus": 1}
    assert m({"num_cpus": 0.5}) == {"cpus": 1}
    assert m({"num_cpus": 0}) == {"cpus": 1}  # a weir task holds a core at least
    assert m({"num_gpus": 0.25}) == {"gpus": 1}  # a whole GPU, not shared
    assert m({"num_gpus": 0}) == {"gpus": 0}
    assert m({"num_gpus": 3.0}) == {"gpus": 3}
    for bad in ({"num_cpus": 1.5}, {"num_gpus": 2.5}):
        with pytest.raises(ValueError, match="whole numbers"):
            m(bad)
    for bad in ({"num_cpus": -1}, {"num_gpus": "1"}, {"num_cpus": True}):
        with pytest.raises(ValueError, match=r"num_[cg]pus: expected a number"):
            m(bad)


def test_memory_is_bytes_rounded_up_to_mib():
    m = ray_names.from_ray
    assert m({"memory": 300 * 1024 * 1024}) == {"memory": "300m"}
    assert m({"memory": 1}) == {"memory": "1m"}
    assert m({"memory": 0}) == {}  # as Ray: no memory asked
    with pytest.raises(ValueError, match="bytes"):
        m({"memory": -1})
    assert m({"memory": 2 * 1024 ** 3 + 1}) == {"memory": "2049m"}
    with pytest.raises(ValueError, match="bytes"):
        m({"memory": "2g"})


def test_retries_and_retry_exceptions():
    m = ray_names.from_ray
    assert m({"max_retries": 0}) == {"retries": 0}
    assert m({"max_retries": -1}) == {"retries": 1000}
    assert m({"retry_exceptions": True}) == {"retry_exceptions": True}
    assert m({"retry_exceptions": [KeyError, OSError]}) == {
        "retry_exceptions": (KeyError, OSError)}
    with pytest.raises(ValueError, match="retry_exceptions"):
        m({"retry_exceptions": ["KeyError"]})
    with pytest.raises(ValueError, match="max_retries"):
        m({"max_retries": -2})


def test_what_weir_does_not_do_is_refused_by_name():
    m = ray_names.from_ray
    assert m({"resources": {}}) == {}
    with pytest.raises(ValueError, match="'TPU'.*no custom resources"):
        m({"resources": {"TPU": 1}})
    with pytest.raises(ValueError, match="num_cpus and num_gpus"):
        m({"resources": {"GPU": 1}})
    assert m({"runtime_env": {"env_vars": {"A": "1"}}}) == {"env": {"A": "1"}}
    with pytest.raises(NotImplementedError, match="pip"):
        m({"runtime_env": {"pip": ["numpy"], "env_vars": {}}})
    with pytest.raises(NotImplementedError, match="num_returns"):
        m({"num_returns": 2})
    assert m({"num_returns": 1, "max_calls": 1, "scheduling_strategy": "SPREAD",
              "name": "t"}) == {"name": "t"}
    with pytest.raises(ValueError, match="unknown option 'num_cpu'"):
        m({"num_cpu": 1})


def test_weir_remote_takes_rays_names_beside_its_own():
    def f(x):
        return x
    rf = weir.remote(num_cpus=2, num_gpus=0.5, max_retries=2,
                     runtime_env={"env_vars": {"A": "1"}})(f)
    o = rf._options
    assert (o["cpus"], o["gpus"], o["retries"], o["env"]) == (2, 1, 2, {"A": "1"})
    assert weir.remote(f)._options["cpus"] == 1  # weir's defaults unchanged
    assert rf.options(num_cpus=4)._options["cpus"] == 4
    assert rf.options(cpus=3)._options["cpus"] == 3
    with pytest.raises(ValueError, match="cpus given twice"):
        weir.remote(cpus=2, num_cpus=2)(f)
    with pytest.raises(ValueError, match="cpus: expected a whole number >= 1"):
        weir.remote(cpus=0)(f)
    with pytest.raises(TypeError, match="unexpected keyword argument 'colour'"):
        weir.remote(colour="red")(f)


def test_retry_exceptions_list_restarts_on_the_runners_own_exit_code(tmp_path):
    o = functions._options(retries=2, retry_exceptions=[KeyError])
    spec = functions._spec("f", o, tmp_path, tmp_path / "c.pkl", [], tmp_path / "r.pkl")
    assert spec["restart"] == {"max_restarts": 2, "retry_exit_codes": "100-255"}
    o = functions._options(retries=2, retry_exceptions=True)
    spec = functions._spec("f", o, tmp_path, tmp_path / "c.pkl", [], tmp_path / "r.pkl")
    assert spec["restart"]["retry_exit_codes"] == "1-255"
    from weir.worker import runner
    assert runner.RETRY_EXIT == functions.RETRY_EXIT == 100


def test_ray_remote_makes_actor_classes_refuses_direct_calls_and_checks_options_at_once():
    @ray.remote
    class A:
        pass
    assert isinstance(A, ray.ActorClass)
    with pytest.raises(TypeError, match=r"A\.remote\("):
        A()
    assert isinstance(ray.remote(num_cpus=1)(type("B", (), {})), ray.ActorClass)
    # a detached actor is taken (docs/ray.md "Detached actors"); another lifetime is not
    assert isinstance(ray.remote(lifetime="detached")(type("C", (), {})), ray.ActorClass)
    with pytest.raises(ValueError, match="lifetime"):
        ray.remote(lifetime="forever")
    with pytest.raises(ValueError, match="lifetime"):
        ray.remote(type("C", (), {})).options(lifetime="forever")
    # so are the strategies; a strategy weir does not know is refused at the decorator
    with pytest.raises(ValueError, match="scheduling_strategy"):
        ray.remote(scheduling_strategy="EVERYWHERE")(lambda: 1)
    with pytest.raises(ValueError, match="placement_group"):
        ray.remote(placement_group="mine")(type("E", (), {}))
    with pytest.raises(ValueError, match="max_concurrency"):
        ray.remote(max_concurrency=0)
    with pytest.raises(ValueError, match="max_retries"):
        ray.remote(max_retries=1)(type("D", (), {}))
    with pytest.raises(ValueError, match="num_returns"):
        ray.method(num_returns=-1)
    with pytest.raises(ValueError, match="whole numbers"):
        ray.remote(num_cpus=1.5)
    with pytest.raises(TypeError, match="not both"):
        ray.remote(len, num_cpus=1)

    @ray.remote
    def f():
        return 1
    with pytest.raises(TypeError, match=r"f\.remote\("):
        f()
    # Ray's defaults: one CPU, three retries after the process died
    assert f._weir_options == {"cpus": 1, "gpus": 0, "retries": 3, "retry_exceptions": False}
    assert f.options(num_gpus=1, max_retries=0)._weir_options["gpus"] == 1
    with pytest.raises(ValueError, match="memory"):
        f.options(memory="1g")


def test_a_ray_task_error_is_also_the_users_exception():
    class Mine(KeyError):
        pass
    cause = Mine("k")
    err = ray.exceptions.from_remote(RemoteError("Mine", "'k'", "Traceback ...", cause, 4),
                                     "lookup")
    assert isinstance(err, ray.exceptions.RayTaskError) and isinstance(err, Mine)
    assert isinstance(err, ray.exceptions.RayError) and isinstance(err, weir.RemoteError)
    assert err.cause is cause and err.function_name == "lookup" and err.job_id == 4
    assert err.as_instanceof_cause() is err
    plain = ray.exceptions.RayTaskError("X", "m", "tb", None, 1)
    assert plain.as_instanceof_cause() is plain
    assert issubclass(ray.exceptions.GetTimeoutError, TimeoutError)
    assert issubclass(ray.exceptions.GetTimeoutError, weir.GetTimeoutError)
    for name in ("TaskCancelledError", "WorkerCrashedError", "ObjectLostError",
                 "RayActorError", "OutOfMemoryError"):
        assert issubclass(getattr(ray.exceptions, name), ray.exceptions.RayError), name


def _python(code, tmp_path, *args, pythonpath):
    prog = tmp_path / "prog.py"
    prog.write_text(textwrap.dedent(code))
    env = dict(os.environ, PYTHONPATH=pythonpath)
    env.pop("WEIR_SERVER", None)
    return subprocess.run([sys.executable] + list(args) + [str(prog), "x", "-y"],
                          capture_output=True, text=True, env=env, timeout=60,
                          cwd=str(tmp_path))


def test_python_m_weir_run_makes_import_ray_weirs(tmp_path):
    (tmp_path / "helper.py").write_text("VALUE = 5\n")  # the program's folder comes first
    r = _python("""\
        import os, sys
        import ray, ray.exceptions
        import helper
        from weir.compat.ray import exceptions
        print(__name__, sys.argv[1:], helper.VALUE)
        print(ray.remote.__module__, ray.exceptions.RayTaskError is exceptions.RayTaskError)
        print(os.environ["PYTHONPATH"].split(os.pathsep)[0].endswith("site"))
        """, tmp_path, "-m", "weir.run", pythonpath=str(REPO / "python"))
    assert r.returncode == 0, r
    assert r.stdout.splitlines() == ["__main__ ['x', '-y'] 5",
                                     "weir.compat.ray.api True", "True"], r
    r = _python("raise KeyError('boom')\n", tmp_path, "-m", "weir.run",
                pythonpath=str(REPO / "python"))
    assert r.returncode == 1 and "KeyError: 'boom'" in r.stderr, r
    assert "runpy" not in r.stderr and "weir/run.py" not in r.stderr, r.stderr


def test_site_folder_alone_is_enough_for_import_ray(tmp_path):
    site = REPO / "python" / "weir" / "compat" / "ray" / "site"
    r = _python("import ray; print(ray.__version__.split('+')[1].startswith('weir'))\n",
                tmp_path, pythonpath=os.pathsep.join([str(site), str(REPO / "python")]))
    assert r.returncode == 0 and r.stdout.strip() == "True", r
    assert Path(site / "ray" / "exceptions.py").is_file()


def test_the_private_server_gets_inits_resources_and_runs_tasks_as_this_user():
    import pwd
    from weir.compat.ray import private
    me = pwd.getpwuid(os.geteuid()).pw_name
    assert private.config_text(4, 2) == ("resources:\n  vcores: 4\n  gpus: 2\n"
                                         "task_user: %s\nkill_grace_seconds: 2\n" % me)
    assert private.config_text() == "task_user: %s\nkill_grace_seconds: 2\n" % me


def test_runtime_env_working_dir_py_modules_local_wheels_and_conda(tmp_path):
    from weir.remote import ray_names as rn
    pkg = tmp_path / "pkg"
    pkg.mkdir()
    wheels = tmp_path / "wheels"
    wheels.mkdir()
    (wheels / "a-1.0-py3-none-any.whl").write_bytes(b"")
    env = tmp_path / "envs" / "mine"
    (env / "bin").mkdir(parents=True)
    (env / "bin" / "python").write_text("#!/bin/sh\n")
    (env / "bin" / "python").chmod(0o755)
    got = rn.from_ray({"runtime_env": {"working_dir": str(tmp_path), "py_modules": [str(pkg)],
                                       "pip": [str(wheels)], "conda": str(env)}})
    assert got["env"][rn.WORKING_DIR_VAR] == str(tmp_path)
    assert got["env"][rn.PY_MODULES_VAR].split(os.pathsep) == [
        str(tmp_path), str(wheels / "a-1.0-py3-none-any.whl")]
    assert got["python"] == str(env / "bin" / "python")
    with pytest.raises(ValueError, match="working_dir: .* does not exist"):
        rn.from_ray({"runtime_env": {"working_dir": str(tmp_path / "nope")}})
    with pytest.raises(NotImplementedError, match="local path only"):
        rn.from_ray({"runtime_env": {"working_dir": "s3://bucket/x.zip"}})
    with pytest.raises(NotImplementedError, match="does not install packages"):
        rn.from_ray({"runtime_env": {"pip": {"packages": ["requests==2"]}}})
    with pytest.raises(NotImplementedError, match="no local environment named 'nosuch'"):
        rn.from_ray({"runtime_env": {"conda": "nosuch"}})
    with pytest.raises(NotImplementedError, match="container not supported"):
        rn.from_ray({"runtime_env": {"container": {}}})
