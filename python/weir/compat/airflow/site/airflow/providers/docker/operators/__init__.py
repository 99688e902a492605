"""airflow.providers.docker.operators (weir: refused on use, see _weir_airflow.refused)."""
