"""Modules that let programs written for other systems run on weir unchanged in their
source: airflow/ (DAG files) and ray/ (remote functions and actors).  Nothing here yet."""
