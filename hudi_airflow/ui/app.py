"""The Hudi view's FastAPI app; the `hudi` Airflow plugin mounts it on the API server (at
/hudi). Every route needs an Airflow login (see `auth`):

    GET /                    HTML page: each configured table, its timeline and services
    GET /api/tables          JSON: {"config_path", "tables": [summary, ...]}
    GET /api/tables/{name}   JSON: one table's summary
    GET /static/{name}       the page's script (draws the timeline charts) and stylesheet

Tables are read on every request: the page shows the timeline as it is now.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from fastapi import FastAPI, HTTPException, Request, status
from fastapi.responses import FileResponse, HTMLResponse, RedirectResponse
from starlette.templating import Jinja2Templates

from hudi_airflow.tables_config import TableEntry, TablesConfigError, config_path, load_tables
from hudi_airflow.ui.auth import ApiUser, LoginRequired, PageUser
from hudi_airflow.ui.summary import instant_time_text, summarize_all, summarize_or_report

HERE = Path(__file__).resolve().parent
STATIC = HERE / "static"
ASSETS = {"timeline.js": "text/javascript", "timeline.css": "text/css"}

templates = Jinja2Templates(directory=HERE / "templates")


def human_bytes(size: int) -> str:
    """1536 -> '1.5 KiB'."""
    value, unit = float(size), "B"
    for bigger in ("KiB", "MiB", "GiB", "TiB"):
        if value < 1024:
            break
        value, unit = value / 1024, bigger
    return f"{size} B" if unit == "B" else f"{value:.1f} {unit}"


templates.env.filters["instant_time"] = instant_time_text
templates.env.filters["human_bytes"] = human_bytes

# No OpenAPI docs: they would be the one page served without a login.
app = FastAPI(title="Hudi tables", docs_url=None, redoc_url=None, openapi_url=None)


@app.exception_handler(LoginRequired)
async def _to_login_page(request: Request, exc: LoginRequired) -> RedirectResponse:
    return RedirectResponse(exc.login_url, status_code=status.HTTP_303_SEE_OTHER)


@app.get("/", response_class=HTMLResponse)
def page(request: Request, user: PageUser) -> HTMLResponse:
    try:
        summaries, error = summarize_all(load_tables()), None
    except TablesConfigError as exc:
        summaries, error = [], str(exc)
    context: dict[str, Any] = {
        "tables": summaries,
        "config_error": error,
        "config_path": str(config_path()),
        "user_name": user.get_name(),
    }
    return templates.TemplateResponse(request, "index.html", context)


@app.get("/api/tables")
def tables(user: ApiUser) -> dict[str, Any]:
    summaries = summarize_all(_entries())
    return {"config_path": str(config_path()), "tables": [s.to_dict() for s in summaries]}


@app.get("/api/tables/{name}")
def table(name: str, user: ApiUser) -> dict[str, Any]:
    for entry in _entries():
        if entry.name == name:
            return summarize_or_report(entry).to_dict()
    raise HTTPException(status.HTTP_404_NOT_FOUND, f"no table named '{name}' in {config_path()}")


@app.get("/static/{name}")
def asset(name: str, user: ApiUser) -> FileResponse:
    if name not in ASSETS:
        raise HTTPException(status.HTTP_404_NOT_FOUND, f"no asset named '{name}'")
    return FileResponse(STATIC / name, media_type=ASSETS[name])


def _entries() -> list[TableEntry]:
    try:
        return load_tables()
    except TablesConfigError as exc:
        raise HTTPException(status.HTTP_500_INTERNAL_SERVER_ERROR, str(exc)) from exc
