"""airflow.providers.cncf (weir: refused on use, see _weir_airflow.refused)."""
