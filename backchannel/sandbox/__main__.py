"""`python -m backchannel.sandbox run FILE.py [--json] [--arg key=value ...]`

Runs a program in the sandbox against the store under BACKCHANNEL_HOME (opened
read-only) and prints {"ok", "result", "error", "stats", "output"} as JSON. Exit
status 0 when the run succeeded, 1 otherwise. `FILE` may be `-` for stdin.
`--arg key=value` fills the program's `context` (a value that parses as JSON is
used as such, otherwise as a string). `--api MODULE:FACTORY` serves another API
object, built as FACTORY(store, settings) (default:
backchannel.graph.api:GraphAPI); tools and tests use it.
"""

from __future__ import annotations

import argparse
import importlib
import json
import sys
from typing import Any

DEFAULT_API = "backchannel.graph.api:GraphAPI"  # what --help shows; imported plainly below


def _parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="python -m backchannel.sandbox", description="Run a program in the backchannel sandbox."
    )
    sub = parser.add_subparsers(dest="command", required=True)
    run = sub.add_parser("run", help="run FILE.py against the store under BACKCHANNEL_HOME")
    run.add_argument("file", help="the program (a .py file, or - for stdin)")
    run.add_argument("--json", action="store_true", help="print one line of compact JSON")
    run.add_argument(
        "--arg",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="an entry of the program's `context` (repeatable)",
    )
    run.add_argument(
        "--api",
        default=DEFAULT_API,
        metavar="MODULE:FACTORY",
        help="the API object to serve, built as FACTORY(store, settings)",
    )
    return parser.parse_args(argv)


def _context(pairs: list[str]) -> dict[str, Any]:
    ctx: dict[str, Any] = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or not key:
            raise ValueError(f"--arg expects KEY=VALUE, got {pair!r}")
        try:
            ctx[key] = json.loads(value)
        except ValueError:
            ctx[key] = value
    return ctx


def _failure(error: str) -> dict[str, Any]:
    return {
        "ok": False,
        "result": None,
        "error": error,
        "output": "",
        "stats": {"api_calls": 0, "assertions_touched": 0, "cpu_s": 0.0, "wall_s": 0.0, "max_rss_mb": 0.0},
    }


def _run(args: argparse.Namespace) -> dict[str, Any]:
    from backchannel.config import ConfigError, load_settings, resolve_paths
    from backchannel.memory import Store, StoreError
    from backchannel.sandbox import run_program

    try:
        code = sys.stdin.read() if args.file == "-" else open(args.file, encoding="utf-8").read()
    except (OSError, UnicodeDecodeError) as exc:
        return _failure(f"cannot read {args.file}: {exc}")
    try:
        context = _context(args.arg)
        paths = resolve_paths()
        settings = load_settings(paths)
        store = Store.open(paths.db_file, read_only=True)
    except (ValueError, ConfigError, StoreError) as exc:
        return _failure(str(exc))
    try:
        factory: Any
        if args.api == DEFAULT_API:
            from backchannel.graph.api import GraphAPI  # the tool's entry, above the library

            factory = GraphAPI
        else:  # a tool's or test's own API, named on the command line
            module, _, attr = args.api.partition(":")
            factory = getattr(importlib.import_module(module), attr)
        api = factory(store, settings)
        return run_program(code, api, settings.sandbox, context=context).to_json()
    finally:
        store.close()


def main(argv: list[str] | None = None) -> int:
    args = _parse_args(argv)
    try:
        out = _run(args)
    except Exception as exc:  # noqa: BLE001 - the parent reports, never dies
        out = _failure(f"{type(exc).__name__}: {exc}")
    try:  # strict: never print NaN or Infinity, which are not JSON
        text = json.dumps(out, ensure_ascii=False, indent=None if args.json else 2, default=str, allow_nan=False)
    except (ValueError, RecursionError) as exc:
        out = _failure(f"the run's outcome is not JSON: {exc}")
        text = json.dumps(out, ensure_ascii=False, indent=None if args.json else 2, allow_nan=False)
    sys.stdout.write(text + "\n")
    sys.stdout.flush()
    return 0 if out.get("ok") else 1


if __name__ == "__main__":
    sys.exit(main())
