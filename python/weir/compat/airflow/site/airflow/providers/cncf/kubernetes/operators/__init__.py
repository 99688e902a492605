"""airflow.providers.cncf.kubernetes.operators (weir: refused on use, see _weir_airflow.refused)."""
