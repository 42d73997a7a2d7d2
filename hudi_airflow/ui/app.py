"""The Hudi view's FastAPI app; the `hudi` Airflow plugin mounts it on the API server (at
/hudi). Every route needs an Airflow login (see `auth`):

    GET /                    HTML page: each configured table, its timeline and services
    GET /api/tables          JSON: {"config_path", "tables": [summary, ...]}
    GET /api/tables/{name}   JSON: one table's summary
    GET /static/{name}       the page's scripts (the timeline charts; its task links when the UI
                             embeds it) and stylesheet

Tables are read on every request: the page shows the timeline as it is now. A bad entry of
the tables file is shown (and listed) in its place with its message; only a file that is no
list of entries at all stops the page (and answers HTTP 500 on the JSON routes).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from fastapi import FastAPI, HTTPException, Request, status
from fastapi.responses import FileResponse, HTMLResponse, RedirectResponse
from starlette.templating import Jinja2Templates

from hudi_airflow.tables_config import TablesConfigError, TablesFile, config_path, read_tables
from hudi_airflow.ui.auth import ApiUser, LoginRequired, PageUser
from hudi_airflow.ui.summary import summarize_file

HERE = Path(__file__).resolve().parent
STATIC = HERE / "static"
ASSETS = {
    "timeline.js": "text/javascript",
    "task_links.js": "text/javascript",
    "timeline.css": "text/css",
}

templates = Jinja2Templates(directory=HERE / "templates")


def human_bytes(size: int) -> str:
    """1536 -> '1.5 KiB'."""
    value, unit = float(size), "B"
    for bigger in ("KiB", "MiB", "GiB", "TiB"):
        if value < 1024:
            break
        value, unit = value / 1024, bigger
    return f"{size} B" if unit == "B" else f"{value:.1f} {unit}"


def utc(iso: str | None) -> str:
    """'2024-01-05T10:30:00.123Z' -> '2024-01-05 10:30:00.123 UTC'; '-' for no time."""
    if not iso:
        return "-"
    return iso.replace("T", " ").removesuffix("Z") + " UTC"


def duration(seconds: float | None) -> str:
    """0.25 -> '0.25 s', 75 -> '1 min 15 s', 7500 -> '2 h 5 min'; '-' for none."""
    if seconds is None:
        return "-"
    if seconds < 60:
        return f"{seconds:.2f} s" if seconds < 10 else f"{seconds:.0f} s"
    whole = int(seconds)
    for size, unit, smaller, smaller_unit in ((86400, "d", 3600, "h"), (3600, "h", 60, "min")):
        if whole >= size:
            return f"{whole // size} {unit} {whole % size // smaller} {smaller_unit}"
    return f"{whole // 60} min {whole % 60} s"


templates.env.filters["human_bytes"] = human_bytes
templates.env.filters["utc"] = utc
templates.env.filters["duration"] = duration

# No OpenAPI docs: they would be the one page served without a login.
app = FastAPI(title="Hudi tables", docs_url=None, redoc_url=None, openapi_url=None)


@app.exception_handler(LoginRequired)
async def _to_login_page(request: Request, exc: LoginRequired) -> RedirectResponse:
    return RedirectResponse(exc.login_url, status_code=status.HTTP_303_SEE_OTHER)


@app.get("/", response_class=HTMLResponse)
def page(request: Request, user: PageUser) -> HTMLResponse:
    try:
        summaries, error = summarize_file(read_tables()), None
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
    summaries = summarize_file(_tables_file())
    return {"config_path": str(config_path()), "tables": [s.to_dict() for s in summaries]}


@app.get("/api/tables/{name}")
def table(name: str, user: ApiUser) -> dict[str, Any]:
    tables = _tables_file()
    for item in tables.items:
        if item.name == name:
            (summary,) = summarize_file(TablesFile(tables.path, (item,)))
            return summary.to_dict()
    raise HTTPException(status.HTTP_404_NOT_FOUND, f"no table named '{name}' in {config_path()}")


@app.get("/static/{name}")
def asset(name: str, user: ApiUser) -> FileResponse:
    if name not in ASSETS:
        raise HTTPException(status.HTTP_404_NOT_FOUND, f"no asset named '{name}'")
    return FileResponse(STATIC / name, media_type=ASSETS[name])


def _tables_file() -> TablesFile:
    try:
        return read_tables()
    except TablesConfigError as exc:
        raise HTTPException(status.HTTP_500_INTERNAL_SERVER_ERROR, str(exc)) from exc
