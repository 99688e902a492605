"""Airflow providers, as weir runs them (docs/airflow.md)."""
