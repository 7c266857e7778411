"""The documentation names only what exists (after sqlite-utils' documentation tests).

Every module or file path, every `backchannel` command, subcommand and option, and every
config key (`[table] key`, `BACKCHANNEL_TABLE__KEY`) named in README.md and docs/*.md is
looked up in the code: a module that moved, a command renamed or a key dropped fails here,
naming the page and the line, instead of misleading a reader.
"""

from __future__ import annotations

import ast
import re
import shlex
import sys
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

import click
import pytest
from pydantic import BaseModel

ROOT = Path(__file__).resolve().parents[2]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
# Where a relative path in the docs may start: the repository, the package, a package of it
# (docs/extraction.md says `meaning/slots.py` for extraction/meaning/slots.py), the docs folder.
PATH_ROOTS = (
    ROOT,
    ROOT / "backchannel",
    *sorted(p for p in (ROOT / "backchannel").iterdir() if p.is_dir()),
    ROOT / "docs",
)
SOURCE_TREES = ("backchannel", "tests", "bench", "config")
FILE_SUFFIXES = ("py", "md", "toml", "sql", "c", "j2", "html", "css", "js", "jsonl", "json", "sh", "txt")
# The top-level names of the package: a dotted name starting with one is a module path.
PACKAGES = sorted(
    p.stem
    for p in (ROOT / "backchannel").iterdir()
    if (p.is_dir() and (p / "__init__.py").exists()) or (p.suffix == ".py" and p.stem != "__init__")
)


@dataclass(frozen=True)
class Mention:
    page: str
    line: int
    text: str

    def __str__(self) -> str:
        return f"{self.page}:{self.line}: {self.text}"


def _lines() -> list[tuple[str, int, str, bool]]:
    """(page, line number, text, inside a code block) for every line of every page."""
    out = []
    for page in PAGES:
        in_code = False
        for n, line in enumerate(page.read_text(encoding="utf-8").splitlines(), 1):
            if line.lstrip().startswith("```"):
                in_code = not in_code
                continue
            out.append((str(page.relative_to(ROOT)), n, line, in_code))
    return out


def _inline_code(line: str) -> list[str]:
    return re.findall(r"`([^`]+)`", line)


# -- module and file paths -------------------------------------------------------------
PATH_RE = re.compile(r"(?<![\w./~$<-])((?:[A-Za-z_][\w-]*/)+[A-Za-z_][\w.-]*)")
BARE_FILE_RE = re.compile(rf"^[A-Za-z_][\w-]*\.(?:{'|'.join(FILE_SUFFIXES)})$")


def _path_mentions() -> list[tuple[Mention, str]]:
    found = []
    for page, n, line, _code in _lines():
        for m in PATH_RE.finditer(line):
            found.append((Mention(page, n, m.group(1).rstrip(".")), line[m.end() :]))
        for code in _inline_code(line):
            if BARE_FILE_RE.match(code) and code.endswith((".py", ".md")):
                found.append((Mention(page, n, code), ""))
    return found


@cache
def _files_named(name: str) -> bool:
    """A bare `vocabulary.py` or `web.md`: a file of ours by that name, or a stdlib module."""
    if name.endswith(".md"):
        return (ROOT / name).exists() or (ROOT / "docs" / name).exists()
    if name.removesuffix(".py") in sys.stdlib_module_names:
        return True
    return any(next((ROOT / tree).rglob(name), None) is not None for tree in SOURCE_TREES)


@cache
def _top_level_names(path: Path) -> frozenset[str]:
    """What a module defines or imports at its top level (functions, classes, constants)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, ast.Assign):
            names.update(t.id for t in node.targets if isinstance(t, ast.Name))
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            names.add(node.target.id)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            names.update((a.asname or a.name).split(".")[0] for a in node.names)
    return frozenset(names)


def _resolve_path(text: str) -> Path | None:
    for base in PATH_ROOTS:
        if (base / text).exists():
            return base / text
    return None


def _path_problem(text: str, after: str) -> str | None:
    """None when `text` names something that exists, else what is wrong."""
    if (
        text.startswith("../")
        or "NNNN" in text
        or "*" in text
        or text.startswith(("http", "www."))
        or text.split("/")[0].isupper()
    ):
        return None  # outside the repository, a pattern, an address, or a placeholder (`DIR/memory.jsonl`)
    if "/" not in text:
        return None if _files_named(text) else "no such file in the repository"
    if _resolve_path(text.rstrip("/")):
        target = _resolve_path(text.rstrip("/"))
        # A name given with the module: `triggers/calendar.py fetch_source`, `result.py` (`PREDICATES`)
        named = re.match(r" ([A-Za-z_]\w*)`", after) or re.match(r"` \(?`([A-Za-z_]\w*)`", after)
        if target is not None and target.suffix == ".py" and named and named.group(1) not in _top_level_names(target):
            return f"{target.relative_to(ROOT)} defines no {named.group(1)}"
        return None
    # `engine/judge_facts.WakeFacts`, `ops/feedback_ops.stats`: a module and one of its names
    module, _, attr = text.rpartition(".")
    if module and attr.isidentifier():
        target = _resolve_path(module + ".py")
        if target is not None:
            return None if attr in _top_level_names(target) else f"{target.relative_to(ROOT)} defines no {attr}"
    if "/" in text and _resolve_path(text + ".py"):
        return None  # `engine/judge_kinds`: a module named without its suffix
    if not text.endswith(tuple("." + s for s in FILE_SUFFIXES)) and not _resolve_path(text.split("/")[0]):
        return None  # prose such as "I/me/my", "clone/fork/exec", "provider/model"
    return "no such path"


def test_every_path_in_the_docs_exists() -> None:
    problems = [f"{m}: {why}" for m, after in _path_mentions() if (why := _path_problem(m.text, after))]
    assert not problems, "the docs name paths that do not exist:\n" + "\n".join(problems)


DOTTED_RE = re.compile(r"^(?:backchannel\.)?([a-z_]+(?:\.[A-Za-z_]\w*)+)(?:\(\))?$")


def _dotted_problem(text: str) -> str | None:
    """`cli.client.call`, `ops.operations()`, `backchannel.config.sections`: each part exists."""
    m = DOTTED_RE.match(text)
    if not m or m.group(1).split(".")[0] not in PACKAGES or text.endswith(tuple("." + s for s in FILE_SUFFIXES)):
        return None
    if not text.startswith("backchannel.") and not text.endswith("()") and text.count(".") < 2:
        return None  # `daemon.started_at`, `stats.isolation`: a JSON field as likely as a module
    parts = m.group(1).split(".")
    here = ROOT / "backchannel"
    for i, part in enumerate(parts):
        if (here / part).is_dir():
            here = here / part
            continue
        if (here / f"{part}.py").exists():
            module = here / f"{part}.py"
            rest = parts[i + 1 :]
            if rest and rest[0] not in _top_level_names(module):
                return f"{module.relative_to(ROOT)} defines no {rest[0]}"
            return None
        if here.is_dir() and (here / "__init__.py").exists():
            return (
                None
                if part in _top_level_names(here / "__init__.py")
                else f"no module or name {part} in {here.relative_to(ROOT)}"
            )
        return f"no module {part} in {here.relative_to(ROOT)}"
    return None


def test_every_dotted_module_name_in_the_docs_exists() -> None:
    problems = [
        f"{Mention(page, n, code)}: {why}"
        for page, n, line, _c in _lines()
        for code in _inline_code(line)
        if (why := _dotted_problem(code))
    ]
    assert not problems, "the docs name modules that do not exist:\n" + "\n".join(problems)


# -- commands --------------------------------------------------------------------------
def _command_lines() -> list[Mention]:
    """Every `backchannel ...` invocation: in code blocks, in inline code, and the README's
    table of commands (written without the program name)."""
    found = []
    for page, n, line, in_code in _lines():
        texts = [line] if in_code else _inline_code(line)
        for text in texts:
            for part in re.split(r";|&&|\|\|", text.split(" #")[0]):
                part = part.strip().removeprefix("$ ")
                if part.startswith("backchannel ") or part == "backchannel":
                    found.append(Mention(page, n, part))
        if page == "README.md" and not in_code and line.startswith("| `"):
            first_cell = line.split(" | ")[0]
            found += [Mention(page, n, "backchannel " + c) for c in _inline_code(first_cell)]
    return found


def _tokens(text: str) -> list[str]:
    text = text.replace("\\|", "|")
    try:
        words = shlex.split(text)
    except ValueError:  # an unclosed quote in prose
        words = text.split()
    return [w.strip("[]") for w in words if w.strip("[]")]


def _command_problem(text: str) -> str | None:
    from backchannel.cli.main import cli

    ctx = click.Context(cli)
    command: click.Command = cli
    words = _tokens(text)[1:]
    skip_value = False
    for word in words:
        if skip_value:
            skip_value = False
            continue
        if word in (">", "<", "|", "2>&1") or word.startswith((">", "<")):
            break
        if word.startswith("-") and word != "-":
            name = word.split("=")[0]
            option = next(
                (
                    p
                    for p in command.params
                    if isinstance(p, click.Option) and (name in p.opts or name in p.secondary_opts)
                ),
                None,
            )
            if option is None and name not in ("-h", "--help"):
                return f"`{command.name}` has no option {name}"
            skip_value = option is not None and not option.is_flag and not option.count and "=" not in word
            continue
        if isinstance(command, click.Group) and not any(isinstance(p, click.Argument) for p in command.params):
            alternatives = word.split("|")
            missing = [a for a in alternatives if command.get_command(ctx, a) is None]
            if missing:
                return f"`{command.name}` has no subcommand {', '.join(missing)}"
            sub = command.get_command(ctx, alternatives[0])
            assert sub is not None
            if len(alternatives) > 1:
                return None  # `service install|uninstall|print`: each checked, no options follow
            command = sub
            continue
        # an argument of a command (placeholders such as NAME, "QUESTION", P-1)
    return None


def test_the_command_lines_are_found() -> None:
    # the test itself: it must see the README's examples and its table
    texts = [m.text for m in _command_lines()]
    assert "backchannel ingest ~/meetings/" in texts
    assert any(t.startswith("backchannel service install\\|uninstall\\|print") for t in texts)


def test_every_command_in_the_docs_exists() -> None:
    problems = [f"{m}: {why}" for m in _command_lines() if (why := _command_problem(m.text))]
    assert not problems, "the docs name commands or options that do not exist:\n" + "\n".join(problems)


# -- config keys -----------------------------------------------------------------------
KEY_RE = re.compile(r"^\[([a-z_]+(?:\.[a-z_]+)*)\](?: ([a-z_]+))?$")


def _field_model(model: type[BaseModel], name: str) -> tuple[bool, Any]:
    """(the field exists, the model below it or None when anything may follow)."""
    field = model.model_fields.get(name)
    if field is None:
        return False, None
    annotation = field.annotation
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return True, annotation
    return True, None


def _key_problem(path: list[str]) -> str | None:
    from backchannel.config.settings import Settings

    model: Any = Settings
    for i, part in enumerate(path):
        if model is None:
            return None  # a mapping, or a value that takes any keys
        exists, model = _field_model(model, part)
        if not exists:
            return f"no config key {'.'.join(path[: i + 1])}"
    return None


def _config_mentions() -> list[tuple[Mention, list[str]]]:
    from backchannel.config.settings import Settings

    found = []
    for page, n, line, _code in _lines():
        for code in _inline_code(line):
            m = KEY_RE.match(code.strip())
            if m:
                table = m.group(1).split(".")
                # `[laughter]`, `[withdrawn]`: transcript markup and redaction marks, not tables
                if m.group(2) or table[0] in Settings.model_fields:
                    found.append((Mention(page, n, code), table + ([m.group(2)] if m.group(2) else [])))
        for var in re.findall(r"\bBACKCHANNEL_([A-Z]+(?:__[A-Z_]+)+)\b", line):
            if var != "TABLE__KEY":  # the pattern itself
                found.append((Mention(page, n, "BACKCHANNEL_" + var), var.lower().split("__")))
    return found


def test_every_config_key_in_the_docs_exists() -> None:
    found = _config_mentions()
    assert any(m.text == "[sandbox] allow_unisolated" for m, _ in found)  # the test sees them
    problems = [f"{m}: {why}" for m, path in found if (why := _key_problem(path))]
    assert not problems, "the docs name config keys that do not exist:\n" + "\n".join(problems)


@cache
def _source_text() -> str:
    return "\n".join(
        p.read_text(encoding="utf-8", errors="replace")
        for tree in ("backchannel", "tests")
        for p in (ROOT / tree).rglob("*.py")
    )


def test_every_environment_variable_in_the_docs_is_read() -> None:
    """`BACKCHANNEL_EMBEDDER_IDLE_S` and the like (not settings) are read somewhere by name."""
    names = {
        (page, n, v)
        for page, n, line, _c in _lines()
        for v in re.findall(r"\bBACKCHANNEL_[A-Z][A-Z_]*[A-Z]\b", line)
        if "__" not in v
    }
    problems = [
        f"{page}:{n}: {v}" for page, n, v in sorted(names) if f'"{v}"' not in _source_text() and v != "BACKCHANNEL_"
    ]
    assert not problems, "the docs name environment variables nothing reads:\n" + "\n".join(problems)


@pytest.mark.parametrize(
    "text, after, problem",
    [
        ("engine/runs.py", "", None),
        ("daemon/runs.py", "", "no such path"),
        ("engine/judge_facts.WakeFacts", "", None),
        ("engine/judge_facts.NoSuchThing", "", "backchannel/engine/judge_facts.py defines no NoSuchThing"),
        ("core/vocabulary.py", "` (`PREDICATES`)", None),
        ("memory/store.py", "` (`PREDICATES`)", "backchannel/memory/store.py defines no PREDICATES"),
        ("triggers/calendar.py", " fetch_source`", None),
    ],
)
def test_the_path_check_tells_moved_modules(text: str, after: str, problem: str | None) -> None:
    assert _path_problem(text, after) == problem


@pytest.mark.parametrize(
    "text, problem",
    [
        ("backchannel ingest --date 2024-01-01 a.vtt", None),
        ("backchannel ingest --no-such-flag", "`ingest` has no option --no-such-flag"),
        ("backchannel service print --systemd", None),
        ("backchannel service reinstall", "`service` has no subcommand reinstall"),
    ],
)
def test_the_command_check_tells_missing_commands(text: str, problem: str | None) -> None:
    assert _command_problem(text) == problem


@pytest.mark.parametrize(
    "path, problem",
    [
        (["sandbox", "allow_unisolated"], None),
        (["sandbox", "allow_unisolation"], "no config key sandbox.allow_unisolation"),
        (["delivery", "email", "security"], None),
    ],
)
def test_the_key_check_tells_missing_keys(path: list[str], problem: str | None) -> None:
    assert _key_problem(path) == problem


# -- lists in docs/architecture.md that the code defines --------------------------------
def _architecture() -> str:
    return (ROOT / "docs" / "architecture.md").read_text(encoding="utf-8")


def test_the_layers_in_architecture_md_are_the_contract() -> None:
    """The diagram under "## Layers" is pyproject's layers contract, top to bottom."""
    import tomllib

    contract = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["importlinter"]
    layers = next(c for c in contract["contracts"] if c["type"] == "layers")["layers"]
    section = _architecture().split("## Layers", 1)[1]
    block = section.split("```", 2)[1]
    drawn = [re.sub(r"\s{2,}\(.*\)$", "", line).strip() for line in block.splitlines() if line.strip()]
    assert drawn == layers


def test_every_table_has_its_owner_in_architecture_md() -> None:
    """Each table the migrations create is in the "One owner per table" list."""
    created = set()
    for sql in (ROOT / "backchannel" / "memory" / "migrations").glob("*.sql"):
        created |= set(re.findall(r"CREATE TABLE (?:IF NOT EXISTS )?(\w+)", sql.read_text(encoding="utf-8"), re.I))
    section = _architecture().split("## One owner per table", 1)[1].split("\n## ", 1)[0]
    listed = {
        name
        for row in section.splitlines()
        if row.startswith("| `")
        for name in re.findall(r"`(\w+)`", row.split(" | ")[0])
    }
    assert created, "no migrations found"
    assert sorted(created - listed) == []


def test_the_core_row_names_every_core_module() -> None:
    """The packages table lists core's modules one by one: a new one is named there too."""
    row = next(line for line in _architecture().splitlines() if line.startswith("| `core` |"))
    modules = {p.name for p in (ROOT / "backchannel" / "core").glob("*.py") if p.name != "__init__.py"}
    assert sorted(modules - set(re.findall(r"`(\w+\.py)`", row))) == []
