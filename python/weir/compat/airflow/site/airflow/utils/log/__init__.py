"""airflow.utils.log: LoggingMixin (logging_mixin), the `log` of operators and hooks."""
