"""The build backend of pyproject.toml: setuptools' own, from where this interpreter has it.

pip builds a pyproject.toml project in an isolated environment holding only what
[build-system] requires, which it would fetch from an index.  weir's package needs nothing
that is not installed already (Debian's python3-setuptools and python3-wheel, or the
setuptools a venv is made with), so `requires` is empty and this module puts the
interpreter's own site-packages back on sys.path before loading setuptools: `pip install
./python` then works offline, and builds exactly as setuptools does.
"""

import site
import sys


def _installed_site_paths() -> list:
    """This interpreter's site-packages, and its base's when it is a venv's."""
    paths = []
    try:
        paths += site.getsitepackages()
    except AttributeError:  # an old virtualenv's site module
        pass
    # a venv made without --system-site-packages: the base interpreter's (Debian's wheel)
    paths += site.getsitepackages([sys.base_prefix]) if sys.base_prefix != sys.prefix else []
    return [p for p in paths if p not in sys.path]


try:
    import setuptools  # noqa: F401
    import wheel  # noqa: F401  (setuptools' bdist_wheel)
except ImportError:
    sys.path.extend(_installed_site_paths())

from setuptools.build_meta import *  # noqa: E402,F401,F403


def get_requires_for_build_wheel(config_settings=None):
    """Nothing to fetch: setuptools' answer (["wheel"]) would send pip to an index."""
    return []


def get_requires_for_build_sdist(config_settings=None):
    """Nothing to fetch."""
    return []


def get_requires_for_build_editable(config_settings=None):
    """Nothing to fetch."""
    return []
