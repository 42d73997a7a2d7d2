"""`hudi`: a command line for operators, in the spirit of Apache Hudi's CLI.

    hudi timeline show --base-path /lake/trips [--archived] [--json]
    hudi commits show --base-path /lake/trips --limit 5
    hudi compaction run --base-path /lake/trips --order LIFO --hoodie-conf k=v
    hudi clustering schedule --base-path /lake/trips --hoodie-conf k=v

Every command opens the table at --base-path (with --hoodie-conf options on top of its
properties), prints an aligned table, or one JSON document with --json. A HudiError prints
one line `error: <class>: <message>` to stderr and exits 1; bad arguments exit 2.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Sequence

from hudi_core.choices import CompactionOrder
from hudi_core.cli import actions, views
from hudi_core.cli.output import Output, write
from hudi_core.errors import HudiError
from hudi_core.table import HudiTable

__all__ = ["build_parser", "main"]

_Command = Callable[[HudiTable, argparse.Namespace], Output]


class _Help(argparse.ArgumentDefaultsHelpFormatter):
    """Shows a default only where there is one worth reading (not None, False or [])."""

    def _get_help_string(self, action: argparse.Action) -> str | None:
        if action.default in (None, False, []) or "default" in (action.help or ""):
            return action.help
        return super()._get_help_string(action)


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        table = HudiTable.open(args.base_path, options=dict(args.hoodie_conf))
        output = args.command(table, args)
    except HudiError as error:
        message = " ".join(str(error).split())
        print(f"error: {type(error).__name__}: {message}", file=sys.stderr)
        return 1
    write(output, args.json, sys.stdout)
    return 0


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="hudi",
        description="Inspect a Hudi table and run its services.",
        formatter_class=_Help,
    )
    groups = parser.add_subparsers(dest="group", required=True, metavar="COMMAND")
    common = _common_options()
    nested: dict[str, argparse._SubParsersAction[argparse.ArgumentParser]] = {}  # by group

    def command(
        group: str, name: str | None, run: _Command, summary: str
    ) -> argparse.ArgumentParser:
        if name is None:
            sub = groups.add_parser(
                group, parents=[common], help=summary, description=summary, formatter_class=_Help
            )
        else:
            if group not in nested:
                nested[group] = groups.add_parser(
                    group, help=f"{group} commands", formatter_class=_Help
                ).add_subparsers(dest="action", required=True, metavar="ACTION")
            sub = nested[group].add_parser(
                name, parents=[common], help=summary, description=summary, formatter_class=_Help
            )
        sub.set_defaults(command=run)
        return sub

    _add_views(command)
    _add_services(command)
    return parser


def _common_options() -> argparse.ArgumentParser:
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument("--base-path", required=True, help="the table's base path or URI")
    common.add_argument(
        "--hoodie-conf",
        action="append",
        type=_key_value,
        default=[],
        metavar="KEY=VALUE",
        help="a hoodie.* option for this command (repeatable)",
    )
    common.add_argument("--json", action="store_true", help="print one JSON document")
    return common


_AddCommand = Callable[[str, "str | None", _Command, str], argparse.ArgumentParser]


def _add_views(command: _AddCommand) -> None:
    timeline = command(
        "timeline",
        "show",
        lambda t, a: views.timeline_show(t, a.archived),
        "instants and their state times (UTC)",
    )
    timeline.add_argument("--archived", action="store_true", help="the archived timeline instead")
    commits = command(
        "commits",
        "show",
        lambda t, a: views.commits_show(t, a.limit),
        "per-commit write stats, newest first",
    )
    commits.add_argument("--limit", type=_positive, default=10, help="how many commits to show")
    command(
        "compactions",
        "show",
        lambda t, a: views.compactions_show(t),
        "pending and completed compactions",
    )
    fsview = command(
        "fsview",
        "latest",
        lambda t, a: views.fsview_latest(t, a.partition),
        "file groups and their latest slices",
    )
    fsview.add_argument("--partition", default=None, help="one partition path only (default: all)")
    command("stats", None, lambda t, a: views.stats(t), "a summary of the table")


def _planning(service: str) -> _Command:
    return lambda table, args: actions.plan(table, service)


def _execution(service: str) -> _Command:
    return lambda table, args: actions.execute(table, service, args.instant, args.order)


def _add_services(command: _AddCommand) -> None:
    for service, due in (("compaction", "if one is due"), ("clustering", "if slices qualify")):
        command(
            service,
            "schedule",
            _planning(service),
            f"plan a {service} {due}",
        )
        run = command(
            service,
            "run",
            _execution(service),
            f"execute a planned {service}",
        )
        run.add_argument(
            "--instant", default=None, help=f"the {service} to run (default: by --order)"
        )
        run.add_argument(
            "--order",
            default=CompactionOrder.FIFO.value,
            choices=[o.value for o in CompactionOrder],
            type=str.upper,
            help=f"which pending {service} when no --instant is given",
        )
    command(
        "clean",
        None,
        lambda t, a: actions.clean(t),
        "delete file slices the cleaner policy no longer keeps",
    )
    command(
        "archive",
        None,
        lambda t, a: actions.archive(t),
        "move old instants to the archived timeline",
    )
    rollback = command(
        "rollback",
        None,
        lambda t, a: actions.rollback(t, a.instant),
        "roll back the latest write or compaction",
    )
    _instant_option(rollback)
    create = command(
        "savepoint",
        "create",
        lambda t, a: actions.savepoint_create(t, a.instant, a.comment),
        "pin a completed commit against cleaning and archival",
    )
    _instant_option(create)
    create.add_argument("--comment", default="", help="a note kept in the savepoint")
    delete = command(
        "savepoint",
        "delete",
        lambda t, a: actions.savepoint_delete(t, a.instant),
        "delete a savepoint",
    )
    _instant_option(delete)
    restore = command(
        "restore",
        None,
        lambda t, a: actions.restore(t, a.instant),
        "take the table back to a savepoint",
    )
    _instant_option(restore)


def _instant_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--instant", required=True, help="the instant time (yyyyMMddHHmmssSSS)")


def _key_value(text: str) -> tuple[str, str]:
    key, sep, value = text.partition("=")
    if not sep or not key.strip():
        raise argparse.ArgumentTypeError(f"{text!r} is not KEY=VALUE")
    return key.strip(), value


def _positive(text: str) -> int:
    number = int(text)
    if number < 1:
        raise argparse.ArgumentTypeError(f"{text} is not a positive number")
    return number
