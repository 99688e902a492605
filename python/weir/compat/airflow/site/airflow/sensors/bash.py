"""airflow.sensors.bash: BashSensor, a command whose exit status says whether it is met."""

from __future__ import annotations

import os
import subprocess
from typing import Any, Dict, Optional, Sequence

from airflow.exceptions import AirflowFailException
from airflow.sensors.base import BaseSensorOperator


class BashSensor(BaseSensorOperator):
    """Met when `bash_command` exits 0.  With `retry_exit_code`, that code is "not yet" and
    any other non-zero code fails the task at once (Airflow's rule)."""

    template_fields: Sequence[str] = ("bash_command", "env")

    def __init__(
        self,
        *,
        bash_command: str,
        env: Optional[Dict[str, str]] = None,
        output_encoding: str = "utf-8",
        retry_exit_code: Optional[int] = None,
        **kwargs: Any,
    ) -> None:
        super().__init__(**kwargs)
        self.bash_command = bash_command
        self.env = env
        self.output_encoding = output_encoding
        self.retry_exit_code = retry_exit_code
        self.template_env: Dict[str, str] = {}  # set by the runner (_weir_airflow.run_task)

    def poke(self, context: Dict[str, Any]) -> bool:
        """Runs the command once."""
        env = dict(os.environ) if self.env is None else dict(self.env)
        env.update(self.template_env)
        rc = subprocess.call(["bash", "-c", self.bash_command], env=env)
        if self.retry_exit_code is not None:
            if rc == self.retry_exit_code:
                return False
            if rc != 0:
                raise AirflowFailException("Bash command returned exit code %d; neither 0 "
                                           "nor retry_exit_code %d" % (rc, self.retry_exit_code))
        return rc == 0


__all__ = ["BashSensor"]
