"""airflow.operators: Bash, Python and empty operators, at their Airflow 2 paths and the old
ones Airflow 2 still imports (bash_operator, python_operator, dummy_operator)."""
