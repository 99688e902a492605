"""Modules that let programs written for other systems run on weir unchanged in their
source: airflow/ (DAG files) and ray/ (Ray Core's remote functions; actors to come).  Each
has a site/ folder that `weir run` puts first on a program's path, so that `import ray`
finds weir's (weir/run.py)."""
