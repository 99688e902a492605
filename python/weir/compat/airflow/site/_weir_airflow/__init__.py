"""weir's side of Airflow DAG files: the DAG processor (processor.py), a DAG as weir's DAG
document (spec.py) and a task's try (run_task.py).  They live beside weir's `airflow` package,
not in the `weir` package, so that neither the processor nor a task imports `weir` (its client
and remote functions take longer to import than the DAG file itself)."""
