"""The `hudi` Airflow plugin: the Hudi timeline view, served by the API server under /hudi/
(behind Airflow's login) and linked from the Airflow UI's Browse menu.

The provider's info (`hudi_airflow.provider`) declares it, but Airflow loads the plugins
providers declare only when it discovers providers eagerly (`[core] lazy_discover_providers =
False`; the default is lazy). The `airflow.plugins` entry point (pyproject.toml) covers the
default and names no plugin otherwise, so the view is registered once either way. No plugins
folder is needed: a copy of this class in one would register it twice.
"""

from __future__ import annotations

from airflow import settings
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


# What the `airflow.plugins` entry point loads: None (skipped by Airflow) when the provider's
# own declaration is loaded.
ENTRY_POINT_PLUGIN = HudiPlugin if settings.LAZY_LOAD_PROVIDERS else None
