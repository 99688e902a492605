"""A DAG file that exits while it is imported (and forks a child that sleeps)."""
import os
import sys

from airflow import DAG

if os.fork() == 0:
    import time
    time.sleep(600)
sys.exit(3)
