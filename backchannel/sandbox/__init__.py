"""Runs generated Python in a fresh, confined child process and serves it the
graph API over JSON on pipes. See docs/sandbox.md.

`run_program(code, api, limits, context=...)` is the one entry; it never raises
for anything the program does."""

from backchannel.sandbox.runner import SandboxResult, execute, prestart, run_program, stop_prestarting

__all__ = ["SandboxResult", "execute", "prestart", "run_program", "stop_prestarting"]
