"""The Airflow provider, the Spark jobs and the DAGs use hudi_core's public API only.

Public: the modules hudi_core.PUBLIC_MODULES lists and, from each, the names its __all__
lists (or its option-declaring submodules). Everything below is internal and may change
between releases without notice; a consumer that needs more asks for an export.
"""

from __future__ import annotations

import ast
import importlib
from pathlib import Path

import hudi_core

ROOT = Path(__file__).resolve().parent.parent
CONSUMERS = ("hudi_airflow", "plugins", "spark_jobs", "dags", "examples")


def _hudi_core_imports() -> list[tuple[str, str, str | None]]:
    """(file, module, name) of every hudi_core import in the consumers (name None for
    `import module`)."""
    found = []
    for folder in CONSUMERS:
        for path in sorted((ROOT / folder).rglob("*.py")):
            where = str(path.relative_to(ROOT))
            for node in ast.walk(ast.parse(path.read_text(), str(path))):
                if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("hudi_core"):
                    found += [(where, node.module, alias.name) for alias in node.names]
                elif isinstance(node, ast.Import):
                    found += [
                        (where, alias.name, None)
                        for alias in node.names
                        if alias.name.startswith("hudi_core")
                    ]
    return found


def _is_public(module: str, name: str | None) -> bool:
    if module not in hudi_core.PUBLIC_MODULES:
        return False
    if name is None:
        return True
    imported = importlib.import_module(module)
    exported = getattr(imported, "__all__", None)
    if exported is None or name in exported:
        return True
    return module != "hudi_core" and importlib.util.find_spec(f"{module}.{name}") is not None


def test_consumers_import_only_public_hudi_core_modules_and_names():
    imports = _hudi_core_imports()
    assert len(imports) > 20, "the scan is expected to find the consumers' imports"
    internal = [f"{where}: {module} {name or ''}" for where, module, name in imports]
    internal = [
        line
        for line, (_, module, name) in zip(internal, imports, strict=True)
        if not _is_public(module, name)
    ]
    assert internal == [], "internal hudi_core imports:\n" + "\n".join(internal)


def test_every_public_module_exists_and_declares_its_names():
    for module in hudi_core.PUBLIC_MODULES:
        imported = importlib.import_module(module)
        exported = getattr(imported, "__all__", ())
        missing = [name for name in exported if not hasattr(imported, name)]
        assert missing == [], f"{module}.__all__ names what it lacks: {missing}"


def test_the_scan_catches_an_internal_import():
    assert not _is_public("hudi_core.write.client", "WriteClient")
    assert not _is_public("hudi_core", "not_exported_anywhere")
    assert _is_public("hudi_core.distributed", "WriteClient")
