"""airflow.decorators.bash: `@task.bash`, a function that returns the bash command to run
(Airflow 2.9).  The function runs in the task's process, its text is rendered as a template
(its values reach bash through variables, as a BashOperator's: _weir_airflow.run_task's
ShellValues), then run as a BashOperator runs its command."""

from __future__ import annotations

from typing import Any, Dict, Optional

from airflow.operators.bash import run_bash, skip_codes
from airflow.operators.python import PythonOperator


class BashDecoratedOperator(PythonOperator):
    """The operator `@task.bash` makes: PythonOperator's call, then the command it returned."""

    def __init__(self, *, env: Optional[Dict[str, str]] = None, append_env: bool = False,
                 cwd: Optional[str] = None, skip_on_exit_code: Any = 99,
                 **kwargs: Any) -> None:
        kwargs.pop("multiple_outputs", None)  # the output is the last line
        super().__init__(**kwargs)
        self.env = env
        self.append_env = append_env
        self.cwd = cwd
        self.skip_on_exit_code = skip_codes(skip_on_exit_code)

    def execute(self, context: Dict[str, Any]) -> Any:
        """The command the function returns, rendered and run; its last line."""
        from _weir_airflow.run_task import ShellValues
        from _weir_airflow.templating import get_template_env

        command = super().execute(context)
        if not isinstance(command, str) or not command.strip():
            raise TypeError("task %s: @task.bash: the function must return a non-empty "
                            "string (the command), got %r" % (self.task_id, command))
        values = ShellValues()
        if "{{" in command or "{%" in command:
            env = get_template_env(self.dag, finalize=values)
            command = values.place(env.from_string(command).render(context))
        return run_bash(command, self.env, self.append_env, self.cwd,
                        self.skip_on_exit_code, values.env)


__all__ = ["BashDecoratedOperator"]
