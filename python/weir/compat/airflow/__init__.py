"""Airflow DAG files in Python, run by weir (docs/airflow.md).

site/airflow/ is weir's `airflow` package, put first on sys.path by the DAG processor
(processor.py: a file's DAGs as weir's DAG documents, spec.py) and by a task's runner
(run_task.py), so that a DAG file's `import airflow` is weir's.  Nothing is defined here.
"""
