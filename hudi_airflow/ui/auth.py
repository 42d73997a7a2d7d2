"""Airflow's authentication for the Hudi view, as FastAPI dependencies.

Airflow mounts a plugin's FastAPI app under its API server without guarding it: the core
API's auth dependencies do not reach mounted apps. So every route of the view depends on one
of these. They apply Airflow's own rules (`airflow.api_fastapi.core_api.security.get_user`):
a JWT in an `Authorization: Bearer` header, else the `_token` cookie the Airflow UI sets at
login, checked by the configured auth manager. The user must then be allowed to see the
Plugins view (`AccessView.PLUGINS`; in the simple auth manager, any role from viewer up).

Airflow's API modules are imported when a request comes, not with the plugin: every Airflow
process (scheduler, DAG processor, workers) loads plugins, and only the API server needs them.
"""

from __future__ import annotations

from typing import Annotated

from airflow.api_fastapi.auth.managers.models.base_user import BaseUser  # a light interface
from fastapi import Depends, HTTPException, Request, status
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer

_bearer = HTTPBearer(auto_error=False)
BearerDep = Annotated[HTTPAuthorizationCredentials | None, Depends(_bearer)]


class LoginRequired(Exception):
    """Raised for a browser page without a valid login; the app redirects to the login page."""

    def __init__(self, login_url: str) -> None:
        super().__init__(login_url)
        self.login_url = login_url


async def api_user(request: Request, bearer: BearerDep) -> BaseUser:
    """For JSON and assets: the Airflow user; else 401 (no token, or an expired one) or 403
    (an invalid token, or a user without access)."""
    user = await _authenticate(request, bearer)
    _authorize(user)
    return user


async def page_user(request: Request, bearer: BearerDep) -> BaseUser:
    """For HTML pages: like `api_user`, but a missing or invalid login sends the browser to
    Airflow's login page, which comes back here once logged in."""
    try:
        user = await _authenticate(request, bearer)
    except HTTPException as exc:
        from airflow.api_fastapi.app import get_auth_manager

        login_url = get_auth_manager().get_url_login(next_url=str(request.url))
        raise LoginRequired(login_url) from exc
    _authorize(user)
    return user


async def _authenticate(request: Request, bearer: HTTPAuthorizationCredentials | None) -> BaseUser:
    from airflow.api_fastapi.core_api.security import get_user

    # get_user's other credential parameter only feeds the OpenAPI docs.
    return await get_user(request, _oauth_token=None, bearer_credentials=bearer)


def _authorize(user: BaseUser) -> None:
    from airflow.api_fastapi.app import get_auth_manager
    from airflow.api_fastapi.auth.managers.models.resource_details import AccessView

    if not get_auth_manager().is_authorized_view(access_view=AccessView.PLUGINS, user=user):
        raise HTTPException(
            status.HTTP_403_FORBIDDEN,
            f"user '{user.get_name()}' may not see the Hudi view: it needs access to the "
            "Plugins view",
        )


ApiUser = Annotated[BaseUser, Depends(api_user)]
PageUser = Annotated[BaseUser, Depends(page_user)]
