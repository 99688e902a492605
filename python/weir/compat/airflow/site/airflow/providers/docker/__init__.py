"""airflow.providers.docker (weir: refused on use, see _weir_airflow.refused)."""
