"""Prints every option as a Markdown table: `python -m hudi_core.config` (the README's list)."""

from hudi_core.config import declared_options


def options_table() -> str:
    lines = ["| option | default | what it does |", "|---|---|---|"]
    for option in declared_options():
        default = option.default
        if isinstance(default, bool):
            default = str(default).lower()
        elif isinstance(default, list):
            default = ",".join(default)
        shown = "" if default in (None, "") else f"`{default}`"
        lines.append(f"| `{option.key}` | {shown} | {option.doc} |")
    return "\n".join(lines)


if __name__ == "__main__":
    print(options_table())
