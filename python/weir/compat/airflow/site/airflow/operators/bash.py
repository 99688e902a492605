"""airflow.operators.bash: BashOperator, a shell command.  One without a template runs as a
plain weir command task; one with a template is rendered in the task's process first."""

from __future__ import annotations

import os
import subprocess
from typing import Any, Dict, Optional, Sequence

from airflow.exceptions import AirflowException, AirflowSkipException
from airflow.models.baseoperator import BaseOperator


class BashOperator(BaseOperator):
    """Runs `bash_command` with bash."""

    template_fields: Sequence[str] = ("bash_command", "env", "cwd")
    template_ext: Sequence[str] = (".sh", ".bash")

    def __init__(
        self,
        *,
        bash_command: str,
        env: Optional[Dict[str, str]] = None,
        append_env: bool = False,
        cwd: Optional[str] = None,
        skip_on_exit_code: Any = 99,
        **kwargs: Any,
    ) -> None:
        super().__init__(**kwargs)
        self.bash_command = bash_command
        self.env = env
        self.append_env = append_env
        self.cwd = cwd
        self.template_env: Dict[str, str] = {}  # set by the runner (_weir_airflow.run_task)
        codes = skip_on_exit_code
        self.skip_on_exit_code = ([] if codes is None else
                                  [codes] if isinstance(codes, int) else list(codes))

    def execute(self, context: Dict[str, Any]) -> Any:
        """Runs the (rendered) command; its last line of output is the return value."""
        env = dict(os.environ) if self.env is None or self.append_env else {}
        env.update(self.env or {})
        env.update(self.template_env)  # the values rendered into the command
        proc = subprocess.Popen(["bash", "-c", self.bash_command], stdout=subprocess.PIPE,
                                env=env, cwd=self.cwd)
        last = b""
        assert proc.stdout is not None
        for line in proc.stdout:
            os.write(1, line)
            if line.strip():
                last = line
        rc = proc.wait()
        if rc in self.skip_on_exit_code:
            raise AirflowSkipException("Bash command returned exit code %d. Skipping." % rc)
        if rc != 0:
            raise AirflowException("Bash command failed. The command returned a non-zero "
                                   "exit code %d." % rc)
        return last.decode(errors="replace").rstrip("\n")
