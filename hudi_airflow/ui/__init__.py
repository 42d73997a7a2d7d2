"""The Hudi timeline view of the Airflow UI: `summary` reads tables with hudi_core (`instants`
the timeline's rows, `layout` the files by partition and file group), `app` serves them (HTML
page and JSON) behind Airflow's authentication, `auth` holds that check, and `airflow_links`
records in commits which Airflow task made them and reads it back."""
