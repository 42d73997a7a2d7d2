"""Airflow's side of the platform: table configs, the hook, operators, sensors, the DAG factory
and the UI view. Imported as a package from the plugins folder (Airflow puts it on sys.path);
the plugin manager itself loads only `hudi_plugin.py` (see `.airflowignore`)."""
