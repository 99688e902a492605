"""airflow.utils.log.logging_mixin: LoggingMixin, which gives operators, hooks and a DAG file's
own classes their `self.log`: a standard `logging.Logger` named as Airflow 2 names it
(`airflow.task.operators.MODULE.CLASS` for an operator, `airflow.task.hooks.MODULE.CLASS` for
a hook, else `MODULE.CLASS`). In a task its records reach the task's log (_weir_airflow/
tasklog.py)."""

import logging
from typing import Optional


class LoggingMixin:
    """`self.log`, made on first use."""

    _log: Optional[logging.Logger] = None
    _log_config_logger_name: Optional[str] = None

    @property
    def log(self) -> logging.Logger:
        """The logger of the object's class."""
        if self._log is None:
            cls = type(self)
            name = "%s.%s" % (cls.__module__, cls.__name__)
            if self._log_config_logger_name:
                name = "%s.%s" % (self._log_config_logger_name, name)
            self._log = logging.getLogger(name)
        return self._log

    @property
    def logger(self) -> logging.Logger:
        """The same logger (Airflow's older name for it)."""
        return self.log


__all__ = ["LoggingMixin"]
