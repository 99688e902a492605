"""airflow.providers.cncf.kubernetes.decorators (weir: refused on use, see _weir_airflow.refused)."""
