"""The Hudi timeline view of the Airflow UI: `summary` reads tables with hudi_core, `app` serves
them (HTML page and JSON) behind Airflow's authentication, `auth` holds that check."""
