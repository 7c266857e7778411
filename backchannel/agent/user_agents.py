"""Users' own agents: a class in the user skills folder, loaded on demand, with the
same rules as the package's agents (agent/base.py) and as user skills (skills/):

    # ~/.config/backchannel/skills/hiring.py
    class Hiring(Agent):
        \"\"\"Who is hiring, and is it worth telling me.\"\"\"
        role = "draft"

        class Opening:                      # a return type: annotated fields only
            org: str
            title: str
            worth_it: bool

        def recent_news(self, days: int = 14) -> list:
            return [s for s in api.signals(days=days)]        # runs in the sandbox

        def read_opening(self, headline: str) -> Opening:
            \"\"\"Read the job opening a news headline announces, if any.\"\"\"
            ...

The file is parsed (`ast`), never imported or executed in the daemon. A completed method
(`...` body) is sent to the agent's model exactly as a package agent's: its docstring,
its name and typed parameters with their values, its return type as a JSON schema; the
answer is validated against a pydantic model built from the annotations. Annotations are
read, not evaluated: str, int, float, bool, None, list[X], dict[str, X], X | None,
Literal["a", ...] and the classes of the file made of annotated fields. A method with a
body runs in the sandbox like a skill's PROGRAM: it sees `api` (the graph API) and its
arguments (`self` is None there), and what it returns comes back as JSON. A user agent
has no offline implementations: with no model, a completed method fails, with a reason.
"""

from __future__ import annotations

import ast
import inspect
import textwrap
from dataclasses import dataclass, field
from pathlib import Path as FilePath
from typing import Any, Literal

from pydantic import BaseModel, create_model

from backchannel.agent.base import Agent, CompletionFailed, MethodSpec, completed_body, type_name

_SCALARS: dict[str, Any] = {
    "str": str,
    "int": int,
    "float": float,
    "bool": bool,
    "None": type(None),
    "Any": Any,
    "dict": dict,
    "list": list,
}


class UserAgentError(Exception):
    """A user agent file that cannot be used; the message names the file and why."""


@dataclass
class UserMethod:
    name: str
    doc: str
    params: list[tuple[str, Any]]
    returns: Any
    completed: bool
    source: str  # the method's source (a body method runs it in the sandbox)
    defaults: dict[str, Any] = field(default_factory=dict)


@dataclass
class UserAgentFile:
    name: str
    file: str
    doc: str
    role: str
    methods: dict[str, UserMethod]


def is_agent_file(text: str) -> bool:
    """True when `text` defines a class deriving from `Agent` (parsed, not run)."""
    try:
        tree = ast.parse(text)
    except SyntaxError:
        return False
    return any(isinstance(n, ast.ClassDef) and any(_base_name(b) == "Agent" for b in n.bases) for n in tree.body)


def _base_name(node: ast.expr) -> str:
    return node.id if isinstance(node, ast.Name) else node.attr if isinstance(node, ast.Attribute) else ""


class _Types:
    """Annotations of one file, read from the AST (never evaluated)."""

    def __init__(self, origin: str, classes: dict[str, ast.ClassDef]):
        self.origin, self.classes = origin, classes
        self.built: dict[str, type[BaseModel]] = {}

    def read(self, node: ast.expr | None) -> Any:
        if node is None:
            return Any
        if isinstance(node, ast.Constant) and node.value is None:
            return type(None)
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            return self.read(ast.parse(node.value, mode="eval").body)  # a quoted annotation
        if isinstance(node, ast.Name):
            if node.id in _SCALARS:
                return _SCALARS[node.id]
            if node.id in self.classes:
                return self.model(node.id)
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.BitOr):
            return self.read(node.left) | self.read(node.right)
        if isinstance(node, ast.Subscript) and isinstance(node.value, ast.Name):
            args = node.slice.elts if isinstance(node.slice, ast.Tuple) else [node.slice]
            if node.value.id == "list" and len(args) == 1:
                return list[self.read(args[0])]  # type: ignore[misc]
            if node.value.id == "dict" and len(args) == 2:
                return dict[self.read(args[0]), self.read(args[1])]  # type: ignore[misc]
            if node.value.id == "Literal" and all(isinstance(a, ast.Constant) for a in args):
                return Literal[tuple(a.value for a in args if isinstance(a, ast.Constant))]
            if node.value.id == "Optional" and len(args) == 1:
                return self.read(args[0]) | None
        raise UserAgentError(
            f"{self.origin}: annotation {ast.unparse(node)!r} is not one a user agent may use "
            "(str, int, float, bool, None, list[X], dict[str, X], X | None, Literal[...], "
            "or a class of the file made of annotated fields)"
        )

    def model(self, name: str) -> type[BaseModel]:
        if name not in self.built:
            node = self.classes[name]
            fields: dict[str, Any] = {}
            for item in node.body:
                if isinstance(item, ast.AnnAssign) and isinstance(item.target, ast.Name):
                    default: Any = ...
                    if item.value is not None:
                        try:
                            default = ast.literal_eval(item.value)
                        except ValueError:
                            raise UserAgentError(
                                f"{self.origin}: {name}.{item.target.id}: a default must be a literal"
                            ) from None
                    fields[item.target.id] = (self.read(item.annotation), default)
                elif not (isinstance(item, ast.Expr) and isinstance(item.value, ast.Constant)):
                    raise UserAgentError(f"{self.origin}: class {name} may hold only annotated fields and a docstring")
            self.built[name] = create_model(name, __doc__=ast.get_docstring(node), **fields)
        return self.built[name]


def _is_none(node: ast.expr) -> bool:
    return isinstance(node, ast.Constant) and node.value is None


def parse_agent(text: str, origin: str) -> UserAgentFile:
    """The one Agent class of a user file, read from its AST."""
    try:
        tree = ast.parse(text)
    except SyntaxError as exc:
        raise UserAgentError(f"{origin}: not valid Python: {exc}") from None
    agents = [n for n in tree.body if isinstance(n, ast.ClassDef) and any(_base_name(b) == "Agent" for b in n.bases)]
    if len(agents) != 1:
        raise UserAgentError(f"{origin}: a user agent file holds exactly one class deriving from Agent")
    cls = agents[0]
    classes = {n.name: n for n in [*tree.body, *cls.body] if isinstance(n, ast.ClassDef) and n is not cls}
    types = _Types(origin, classes)
    role = "draft"
    methods: dict[str, UserMethod] = {}
    for item in cls.body:
        if isinstance(item, ast.Assign) and [getattr(t, "id", "") for t in item.targets] == ["role"]:
            role = str(ast.literal_eval(item.value))
        if not isinstance(item, ast.FunctionDef) or item.name.startswith("_"):
            continue
        source = textwrap.dedent(ast.get_source_segment(text, item) or "")
        args = item.args.args[1:]
        defaults = dict(
            zip(
                [a.arg for a in args][len(args) - len(item.args.defaults) :],
                [ast.literal_eval(d) for d in item.args.defaults],
            )
        )
        done = completed_body(source)
        doc = inspect.cleandoc(ast.get_docstring(item) or "")
        if done and not doc:
            raise UserAgentError(f"{origin}: {cls.name}.{item.name}: a completed method needs a docstring (its prompt)")
        if done and item.returns is None:
            raise UserAgentError(f"{origin}: {cls.name}.{item.name}: a completed method needs a return type")
        methods[item.name] = UserMethod(
            item.name,
            doc,
            [(a.arg, types.read(a.annotation)) for a in args],
            types.read(item.returns) if item.returns is not None else Any,
            done,
            source,
            defaults,
        )
    if role not in ("draft", "sweep", "judge"):
        raise UserAgentError(f"{origin}: role must be draft, sweep or judge, not {role!r}")
    from backchannel.sandbox.policy import PolicyViolation, check_source

    for m in methods.values():
        if not m.completed:  # parsed and checked only, never run here
            try:
                check_source(m.source, f"<{cls.name}.{m.name}>")
            except (SyntaxError, PolicyViolation) as exc:
                raise UserAgentError(f"{origin}: {cls.name}.{m.name} would be refused by the sandbox: {exc}") from None
    return UserAgentFile(cls.name, origin, inspect.cleandoc(ast.get_docstring(cls) or ""), role, methods)


class UserAgent(Agent):
    """A user agent at run time: completed methods through the gateway, bodies in the sandbox."""

    def __init__(self, parsed: UserAgentFile, **kwargs: Any):
        super().__init__(**kwargs)
        self.parsed = parsed
        self.role_name = parsed.role

    def spec(self, method: str) -> MethodSpec:
        m = self.parsed.methods[method]
        params = [inspect.Parameter("self", inspect.Parameter.POSITIONAL_OR_KEYWORD)] + [
            inspect.Parameter(
                n,
                inspect.Parameter.POSITIONAL_OR_KEYWORD,
                annotation=a,
                default=m.defaults.get(n, inspect.Parameter.empty),
            )
            for n, a in m.params
        ]
        return MethodSpec(
            self.parsed.name, m.name, m.doc, tuple(m.params), m.returns, self.parsed.role, inspect.Signature(params)
        )

    def call(self, method: str, *args: Any, **kwargs: Any) -> Any:
        """Call `method`: a completed one by the model, a body in the sandbox."""
        if method not in self.parsed.methods:
            raise UserAgentError(
                f"{self.parsed.name} has no method {method!r} (it has: {', '.join(self.parsed.methods) or 'none'})"
            )
        m = self.parsed.methods[method]
        spec = self.spec(method)
        bound = spec.signature.bind(self, *args, **kwargs)
        bound.apply_defaults()
        values = {n: bound.arguments[n] for n, _ in m.params}
        if m.completed:
            if self.gateway is None or not self.gateway.available(self.parsed.role):
                raise CompletionFailed(
                    method,
                    f"no model is configured for role {self.parsed.role!r}, and a user "
                    "agent's completed method has no offline implementation",
                )
            return self._by_model(spec, values)
        return self._in_sandbox(m, values)

    def _in_sandbox(self, m: UserMethod, values: dict[str, Any]) -> Any:
        from backchannel.sandbox import run_program

        program = f"{m.source}\n\nresult = {m.name}(None, **context)\n"
        res = run_program(program, getattr(self, "api", None), self.settings.sandbox, context=values)
        if not res.ok:
            raise UserAgentError(f"{self.parsed.name}.{m.name} failed in the sandbox: {res.error}")
        return res.result

    def model_for(self, method: str) -> str:
        if self.gateway is None or not self.gateway.available(self.parsed.role):
            return "offline"
        return str(self.gateway.model_for(self.parsed.role))


def agent_files(paths: Any) -> list[FilePath]:
    """The user skills folder's files that define an agent."""
    folder = FilePath(paths.user_skills_dir) if paths is not None else None
    if folder is None or not folder.is_dir():
        return []
    out = []
    for f in sorted(folder.glob("*.py")):
        try:
            if is_agent_file(f.read_text(encoding="utf-8")):
                out.append(f)
        except (OSError, UnicodeDecodeError):
            continue
    return out


def load_agent(name: str, paths: Any, **kwargs: Any) -> UserAgent:
    """The user agent class `name` (or file stem), parsed now: on demand, never at start."""
    for f in agent_files(paths):
        text = f.read_text(encoding="utf-8")
        parsed = parse_agent(text, str(f))
        if name in (parsed.name, f.stem):
            return UserAgent(parsed, **kwargs)
    raise UserAgentError(f"no user agent named {name!r} in {getattr(paths, 'user_skills_dir', 'the skills folder')}")


def describe_user_agents(paths: Any, settings: Any) -> list[dict[str, Any]]:
    """`describe()`'s rows for the user's agents; a file that cannot be used, with its error."""
    from backchannel.agent.models import ROLE_FIELDS

    rows: list[dict[str, Any]] = []
    for f in agent_files(paths):
        try:
            parsed = parse_agent(f.read_text(encoding="utf-8"), str(f))
        except (UserAgentError, OSError, ValueError) as exc:
            rows.append(
                {
                    "agent": f.stem,
                    "method": None,
                    "runs": None,
                    "model": None,
                    "role": None,
                    "offline": None,
                    "returns": None,
                    "origin": str(f),
                    "error": str(exc),
                }
            )
            continue
        model = getattr(settings.models, ROLE_FIELDS[parsed.role], "offline") if settings is not None else "offline"
        for m in parsed.methods.values():
            runs = ("offline" if model == "offline" else "model") if m.completed else "sandbox"
            rows.append(
                {
                    "agent": parsed.name,
                    "method": m.name,
                    "runs": runs,
                    "model": model if m.completed and model != "offline" else None,
                    "role": parsed.role,
                    "offline": None,
                    "returns": type_name(m.returns),
                    "origin": str(f),
                    "error": None,
                }
            )
    return rows
