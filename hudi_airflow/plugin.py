"""The `hudi` Airflow plugin: the Hudi timeline view, served by the API server under /hudi/
(behind Airflow's login) and linked from the Airflow UI's Browse menu.

The plugin manager loads only this file (see .airflowignore); the code lives in the
`hudi_airflow` package next to it, importable because Airflow puts this folder on sys.path.
"""

from __future__ import annotations

from airflow.plugins_manager import AirflowPlugin
from hudi_airflow.ui.app import app as hudi_view_app

URL_PREFIX = "/hudi"


class HudiPlugin(AirflowPlugin):
    name = "hudi"
    fastapi_apps = [{"app": hudi_view_app, "url_prefix": URL_PREFIX, "name": "Hudi tables"}]
    # The UI shows the view in an iframe at /plugin/hudi-tables; a relative href keeps it
    # working when Airflow is served under a base URL path.
    external_views = [
        {
            "name": "Hudi tables",
            "href": f"{URL_PREFIX.lstrip('/')}/",
            "url_route": "hudi-tables",
            "destination": "nav",
            "category": "browse",
        }
    ]
