"""airflow.operators.bash: BashOperator, a shell command.  One without a template runs as a
plain weir command task; one with a template is rendered in the task's process first."""

from __future__ import annotations

import os
import subprocess
import warnings
from typing import Any, Dict, List, Optional, Sequence

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
        old_name = kwargs.pop("skip_exit_code", None)  # Airflow 2.4's name, still taken
        if old_name is not None:
            warnings.warn("skip_exit_code is deprecated. Please use skip_on_exit_code",
                          DeprecationWarning, stacklevel=2)
            skip_on_exit_code = old_name
        super().__init__(**kwargs)
        self.bash_command = bash_command
        self.env = env
        self.append_env = append_env
        self.cwd = cwd
        self.template_env: Dict[str, str] = {}  # set by the runner (_weir_airflow.run_task)
        self.skip_on_exit_code = skip_codes(skip_on_exit_code)

    def execute(self, context: Dict[str, Any]) -> Any:
        """Runs the (rendered) command; its last line of output is the return value."""
        return run_bash(self.bash_command, self.env, self.append_env, self.cwd,
                        self.skip_on_exit_code, self.template_env)


def skip_codes(codes: Any) -> List[int]:
    """`skip_on_exit_code` as a list (None: none; one int: it)."""
    return [] if codes is None else [codes] if isinstance(codes, int) else list(codes)


def run_bash(command: str, env: Optional[Dict[str, str]], append_env: bool,
             cwd: Optional[str], skip_on_exit_code: Sequence[int],
             template_env: Dict[str, str]) -> str:
    """Runs `command` with bash as BashOperator does: `env` replaces the environment unless
    `append_env`; `template_env` holds the values rendered into it; the output goes to the
    log as it comes, its last line is returned; an exit status of `skip_on_exit_code` skips,
    any other but 0 fails."""
    full = dict(os.environ) if env is None or append_env else {}
    full.update(env or {})
    full.update(template_env)
    proc = subprocess.Popen(["bash", "-c", command], stdout=subprocess.PIPE, env=full, cwd=cwd)
    last = b""
    assert proc.stdout is not None
    for line in proc.stdout:
        os.write(1, line)
        if line.strip():
            last = line
    rc = proc.wait()
    if rc in skip_on_exit_code:
        raise AirflowSkipException("Bash command returned exit code %d. Skipping." % rc)
    if rc != 0:
        raise AirflowException("Bash command failed. The command returned a non-zero "
                               "exit code %d." % rc)
    return last.decode(errors="replace").rstrip("\n")
