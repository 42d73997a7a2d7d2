"""The Apache Hudi provider for Airflow: table configs, the `hudi` connection's hook,
operators, sensors, triggers, the DAG factory and the timeline view (a UI plugin).

Installed with the project (`pip install hudi-airflow[airflow]`); Airflow finds it through
the `apache_airflow_provider` entry point (`hudi_airflow.provider.get_provider_info`)."""
