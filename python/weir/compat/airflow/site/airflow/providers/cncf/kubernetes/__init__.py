"""airflow.providers.cncf.kubernetes (weir: refused on use, see _weir_airflow.refused)."""
