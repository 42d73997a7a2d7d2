"""Every error hudi_core and spark_jobs raise on purpose is a specific HudiError subclass that
`hudi_core` exports: callers catch by meaning (CorruptFileError, InvalidOptionError, ...), never
a bare HudiError nor a ValueError out of a format parser."""

from __future__ import annotations

import ast
import builtins
import inspect
from collections.abc import Iterator
from pathlib import Path

import hudi_core
from hudi_core import errors

ROOT = Path(__file__).resolve().parents[2]
SCANNED = ("hudi_core", "spark_jobs")
ERROR_CLASSES = {
    name: value
    for name, value in vars(errors).items()
    if inspect.isclass(value) and issubclass(value, errors.HudiError)
}


def _raises(path: Path) -> Iterator[tuple[int, str, str]]:
    """(line, raised name, innermost enclosing function) of every `raise Name(...)`."""
    tree = ast.parse(path.read_text(), filename=str(path))
    yield from _raises_in(tree, "<module>")


def _raises_in(node: ast.AST, function: str) -> Iterator[tuple[int, str, str]]:
    for child in ast.iter_child_nodes(node):
        if isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef):
            yield from _raises_in(child, child.name)
            continue
        if isinstance(child, ast.Raise) and child.exc is not None:
            raised = child.exc.func if isinstance(child.exc, ast.Call) else child.exc
            yield child.lineno, ast.unparse(raised).rsplit(".", 1)[-1], function
        yield from _raises_in(child, function)


def _allowed(raised: str, function: str) -> bool:
    if raised in ERROR_CLASSES:
        return raised != "HudiError"
    if raised == "ArgumentTypeError":
        return True  # argparse's protocol for a flag's type: it becomes a usage error
    if not raised[:1].isupper():
        return True  # a variable or a factory (corrupt(...)), typed to return a HudiError
    builtin = getattr(builtins, raised, None)
    if not (isinstance(builtin, type) and issubclass(builtin, BaseException)):
        return False  # a third-party or local class: callers could not catch it by meaning
    # Not errors of hudi_core's making: Storage mirrors the OS (FileExistsError on an
    # exclusive create), a command line exits, and a module's or class's __getattr__ must
    # raise AttributeError for getattr and hasattr to work.
    return (
        issubclass(builtin, OSError)
        or builtin is SystemExit
        or (builtin is AttributeError and function == "__getattr__")
    )


def test_only_specific_hudi_errors_are_raised():
    offenders = sorted(
        f"{path.relative_to(ROOT)}:{line}: raise {raised}"
        for folder in SCANNED
        for path in (ROOT / folder).rglob("*.py")
        for line, raised, function in _raises(path)
        if not _allowed(raised, function)
    )
    assert offenders == []


def test_every_error_class_is_exported_from_hudi_core():
    missing = sorted(name for name in ERROR_CLASSES if getattr(hudi_core, name, None) is None)
    assert missing == []
    assert set(ERROR_CLASSES) <= set(hudi_core.__all__)
