"""airflow.configuration: `conf`, Airflow's configuration as a DAG file reads it
(`conf.get("core", "KEY", fallback=...)`, `getboolean`, `getint`, `has_option`).  weir has no
airflow.cfg: the keys are Airflow's environment overrides, AIRFLOW__SECTION__KEY, in the
environment the DAG file and its tasks get; any other key is its fallback, or KeyError."""

from __future__ import annotations

import os
from typing import Dict, Mapping

from _weir_airflow.context import ConfigView


def from_environment(env: Mapping[str, str]) -> ConfigView:
    """The AIRFLOW__SECTION__KEY variables of `env` as a configuration."""
    sections: Dict[str, Dict[str, str]] = {}
    for name, value in env.items():
        parts = name.split("__")
        if len(parts) == 3 and parts[0] == "AIRFLOW" and parts[1] and parts[2]:
            sections.setdefault(parts[1].lower(), {})[parts[2].lower()] = value
    return ConfigView(sections)


conf = from_environment(os.environ)

__all__ = ["conf"]
