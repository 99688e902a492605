"""Unit tests of the Python package (python/weir): no server, no `weir` program unless a
test says so.  The package is imported from the source tree, as the system tests do."""

import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "python"))
AIRFLOW_SITE = REPO / "python" / "weir" / "compat" / "airflow" / "site"


@pytest.fixture
def warm(tmp_path):
    """A warm DAG processor (_weir_airflow/warm_processor.py) on tmp_path, stopped by closing
    its input: it must then exit 0."""
    env = dict(os.environ, PYTHONPATH=str(AIRFLOW_SITE))
    p = subprocess.Popen([sys.executable, "-m", "_weir_airflow.warm_processor", str(tmp_path)],
                         stdin=subprocess.PIPE, stdout=subprocess.PIPE, env=env, cwd=tmp_path)
    yield p
    p.stdin.close()
    assert p.wait(timeout=30) == 0
