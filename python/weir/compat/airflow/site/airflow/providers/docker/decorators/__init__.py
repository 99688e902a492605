"""airflow.providers.docker.decorators (weir: refused on use, see _weir_airflow.refused)."""
