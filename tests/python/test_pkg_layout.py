"""The package's layout: one version for the `weir` program and the package, the public
names unchanged, the old module names still importable, the compat modules empty."""

import importlib
import os
import re
import subprocess
import tomllib
import types

import pytest

import weir
from conftest import REPO


def test_one_version_for_the_program_and_the_package():
    exe = os.environ.get("WEIR_BIN") or str(REPO / "build" / "weir")
    if not os.path.exists(exe):
        pytest.skip("no weir program built (make weir, or set WEIR_BIN)")
    out = subprocess.run([exe, "--version"], capture_output=True, text=True, timeout=30)
    assert out.returncode == 0, out
    assert out.stdout.strip() == "weir %s" % weir.__version__


def test_the_version_has_one_source():
    from weir import _version
    assert weir.__version__ == _version.__version__
    assert re.fullmatch(r"\d+\.\d+\.\d+", weir.__version__)
    pyproject = tomllib.loads((REPO / "python" / "pyproject.toml").read_text())
    assert "version" in pyproject["project"]["dynamic"]
    assert pyproject["tool"]["setuptools"]["dynamic"]["version"] == {
        "attr": "weir._version.__version__"}
    assert "python/weir/_version.py" in (REPO / "Makefile").read_text()
    for header in ("src/cli/cli_common.h", "src/api/api.h"):  # no version of their own
        assert not re.search(r'#define \w*VERSION "', (REPO / header).read_text()), header


def test_the_public_names_are_unchanged():
    assert sorted(weir.__all__) == sorted([
        "remote", "get", "wait", "put", "train", "init", "kill", "cancel", "Client",
        "Future", "ObjectRef", "RemoteFunction", "WeirError", "ApiError", "ResourceError",
        "RemoteError", "JobFailed", "SerializationError", "ServerUnreachable",
        "GetTimeoutError"])
    for name in weir.__all__:
        assert getattr(weir, name) is not None
    assert callable(weir.remote) and weir.cancel is weir.kill


def test_the_old_module_names_still_work():
    old = importlib.import_module("weir._remote")
    assert old.ObjectRef is weir.ObjectRef and old.get is weir.get and callable(old._at_exit)
    assert weir._remote is old  # reached as an attribute of the package too
    assert importlib.import_module("weir.client").Client is weir.Client
    assert (REPO / "python" / "weir" / "_runner.py").is_file()


def test_every_package_folder_is_in_pyproject_and_typed():
    pyproject = tomllib.loads((REPO / "python" / "pyproject.toml").read_text())
    root = REPO / "python"
    found = sorted(str(p.parent.relative_to(root)).replace(os.sep, ".")
                   for p in (root / "weir").rglob("__init__.py"))
    assert sorted(pyproject["tool"]["setuptools"]["packages"]) == found
    assert (root / "weir" / "py.typed").exists()
    assert pyproject["tool"]["setuptools"]["package-data"]["weir"] == ["py.typed"]


@pytest.mark.parametrize("name", ["weir.compat", "weir.compat.airflow", "weir.compat.ray",
                                  "weir.worker"])
def test_the_places_to_come_define_nothing_yet(name):
    mod = importlib.import_module(name)
    defined = [n for n, v in vars(mod).items()
               if not n.startswith("__") and not isinstance(v, types.ModuleType)]
    assert mod.__doc__ and defined == []
