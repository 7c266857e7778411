"""Agents as Python objects: the model's part of the code, readable method by method.

An agent is a class. Its attributes are its state (what it may see), its methods its
capabilities. A method with a body is ordinary, deterministic Python. A method whose
body is `...` (a docstring and `...`, nothing else) is *completed*: at run time its
call goes to the agent's model through the gateway (agent/models.py), and what the
model receives is exactly

- the method's docstring (the system message), and
- the method's name and its typed parameters with their values (the user message, JSON),
- the return type as a JSON schema (the gateway's structured output: `response_format`
  where the provider supports it, else a system message; never anything else),

and nothing else: no attribute of the agent, no other method, no conversation. The
answer is validated against the return type (pydantic, after the gateway's one repair
attempt); a failure raises `CompletionFailed`, which callers turn into silence and
record, as before (the gateway has already written every attempt to `model_calls`).

With no model for the agent's role ("offline", or no gateway), the method runs the
deterministic implementation registered for it (`@SomeAgent.offline("method")`); an
agent with neither raises `CompletionFailed`. `describe()` says, per method, which
one a configuration runs (`backchannel skills`).

Sub-agents are attributes: an annotation naming an Agent subclass (`sweeper: Sweeper`)
is built with the parent's gateway and run, its own model (its `role`), its own state
and its own token budget (`budget_tokens`, counted from its own calls, on top of the
gateway's per-run and per-day budgets).
"""

from __future__ import annotations

import ast
import inspect
import json
import re
import textwrap
import typing
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, ClassVar

from pydantic import BaseModel, TypeAdapter, ValidationError, create_model

_DOTTED = re.compile(r"\b(?:[A-Za-z_]\w*\.)+([A-Za-z_]\w*)")  # typing.Optional -> Optional


class CompletionFailed(Exception):
    """A completed method produced nothing usable: the caller stays silent (and records why).
    `budget` is True when a budget (the agent's or the gateway's) refused the call."""

    def __init__(self, method: str, reason: str, *, budget: bool = False):
        self.method, self.reason, self.budget = method, reason, budget
        super().__init__(f"{method}: {reason}")


def is_completed(fn: Callable[..., Any]) -> bool:
    """True when `fn`'s body is only a docstring and `...` (read from its source, on the AST)."""
    try:
        source = textwrap.dedent(inspect.getsource(fn))
    except (OSError, TypeError):
        return False
    return completed_body(source)


def completed_body(source: str) -> bool:
    """True when the first function defined in `source` has only a docstring and `...`."""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return False
    node = next((n for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))), None)
    if node is None:
        return False
    body = list(node.body)
    if (
        body
        and isinstance(body[0], ast.Expr)
        and isinstance(body[0].value, ast.Constant)
        and isinstance(body[0].value.value, str)
    ):
        body = body[1:]
    return (
        len(body) == 1
        and isinstance(body[0], ast.Expr)
        and isinstance(body[0].value, ast.Constant)
        and body[0].value.value is Ellipsis
    )


def type_name(annotation: Any) -> str:
    """An annotation as the model reads it: `Path`, `list[str]`, `int | None`."""
    if isinstance(annotation, type) and not typing.get_args(annotation):
        return annotation.__name__
    return _DOTTED.sub(r"\1", repr(annotation)).replace("<class '", "").replace("'>", "")


def _jsonable(value: Any, annotation: Any) -> Any:
    """A parameter's value as JSON: pydantic's dump of its declared type (a model's
    public fields only: its private attributes never cross)."""
    if value is None:
        return None
    try:
        return TypeAdapter(annotation).dump_python(value, mode="json")
    except Exception:  # noqa: BLE001 - an annotation pydantic cannot build: dump by the value's type
        return TypeAdapter(type(value)).dump_python(value, mode="json")


@dataclass(frozen=True)
class MethodSpec:
    """One completed method: everything the model may receive about it."""

    owner: str  # the class that defines it
    name: str
    doc: str
    params: tuple[tuple[str, Any], ...]  # (name, annotation), in order, without self
    returns: Any  # the return annotation
    role: str | None  # a role of its own (e.g. "judge"); None: the agent's
    signature: inspect.Signature = field(compare=False, repr=False, default=None)  # type: ignore[assignment]

    @property
    def answer_model(self) -> type[BaseModel]:
        """The pydantic model the gateway validates the answer against: the return type
        itself when it is a model, else a wrapper `{"value": <the return type>}`."""
        if isinstance(self.returns, type) and issubclass(self.returns, BaseModel):
            return self.returns
        return _wrapper(self.owner, self.name, self.returns)

    def schema(self) -> dict[str, Any]:
        return self.answer_model.model_json_schema()

    def messages(self, values: dict[str, Any]) -> list[dict[str, str]]:
        """The exact messages the agent sends for a call with `values` (by parameter name)."""
        call = {
            "method": self.name,
            "parameters": [
                {"name": n, "type": type_name(a), "value": _jsonable(values.get(n), a)} for n, a in self.params
            ],
        }
        return [
            {"role": "system", "content": self.doc},
            {"role": "user", "content": json.dumps(call, ensure_ascii=False)},
        ]

    def unwrap(self, parsed: BaseModel) -> Any:
        if self.answer_model is self.returns:
            return parsed
        return parsed.value  # type: ignore[attr-defined]


_WRAPPERS: dict[tuple[str, str, Any], type[BaseModel]] = {}


def _wrapper(owner: str, name: str, returns: Any) -> type[BaseModel]:
    key = (owner, name, returns)  # a user agent's file read again builds new types
    if key not in _WRAPPERS:
        camel = "".join(p.capitalize() for p in name.split("_"))
        _WRAPPERS[key] = create_model(f"{camel}Answer", value=(returns, ...))
    return _WRAPPERS[key]


def uses_role(role: str) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Completes the decorated method with another role's model than the agent's
    (the judge's methods: `[models] draft`, recorded as role "judge")."""

    def mark(fn: Callable[..., Any]) -> Callable[..., Any]:
        fn.__agent_role__ = role  # type: ignore[attr-defined]
        return fn

    return mark


class _Completed:
    """The descriptor that replaces a `...` method on its class."""

    def __init__(self, fn: Callable[..., Any]):
        self.fn = fn
        self.name = fn.__name__
        self.__doc__ = fn.__doc__
        self.__wrapped__ = fn
        self._spec: MethodSpec | None = None
        self.owner_name = ""

    def __set_name__(self, owner: type, name: str) -> None:
        self.owner_name = owner.__name__

    def spec(self) -> MethodSpec:
        if self._spec is None:
            module = inspect.getmodule(self.fn)
            hints = typing.get_type_hints(self.fn, vars(module) if module else None)
            sig = inspect.signature(self.fn)
            params = tuple((n, hints.get(n, Any)) for n in list(sig.parameters)[1:])
            if "return" not in hints:
                raise TypeError(f"{self.owner_name}.{self.name}: a completed method needs a return type")
            doc = inspect.cleandoc(self.fn.__doc__ or "")
            if not doc:
                raise TypeError(f"{self.owner_name}.{self.name}: a completed method needs a docstring (its prompt)")
            self._spec = MethodSpec(
                self.owner_name, self.name, doc, params, hints["return"], getattr(self.fn, "__agent_role__", None), sig
            )
        return self._spec

    def __get__(self, agent: Agent | None, owner: type | None = None) -> Any:
        if agent is None:
            return self

        def call(*args: Any, **kwargs: Any) -> Any:
            return agent.complete(self.name, *args, **kwargs)

        call.__name__ = self.name
        call.__doc__ = self.fn.__doc__
        return call


@dataclass
class CallRecord:
    """One completed call as the agent saw it (the gateway's `model_calls` has every attempt)."""

    method: str
    by: str  # the model string, or "offline"
    tokens: int = 0
    outcome: str = "ok"  # ok | failed | budget_stopped
    error: str | None = None


class Agent:
    """The base of every agent. Subclasses set `role` (the `[models]` field their
    completed methods use: sweep or draft), declare sub-agents as annotations, and
    write methods; `...` methods are completed (module docstring)."""

    role: ClassVar[str] = "draft"
    budget_tokens: int | None = None  # this agent's own token budget (None: only the gateway's)
    _completed: ClassVar[dict[str, _Completed]] = {}
    _offline: ClassVar[dict[str, Callable[..., Any]]] = {}

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        completed: dict[str, _Completed] = {}
        for base in reversed(cls.__mro__[1:]):
            completed.update(getattr(base, "_completed", {}) if base is not Agent else {})
        for name, value in list(vars(cls).items()):
            if inspect.isfunction(value) and not name.startswith("__") and is_completed(value):
                desc = _Completed(value)
                desc.owner_name = cls.__name__
                setattr(cls, name, desc)
                completed[name] = desc
            elif name in completed and not isinstance(value, _Completed):
                completed.pop(name)  # overridden with a body: ordinary Python now
        cls._completed = completed
        cls._offline = dict(getattr(cls, "_offline", {}))

    def __init__(
        self,
        *,
        gateway: Any = None,
        run_id: str | None = None,
        settings: Any = None,
        budget_tokens: int | None = None,
        **state: Any,
    ):
        self.gateway = gateway
        self.run_id = run_id
        self.settings = settings
        if budget_tokens is not None:
            self.budget_tokens = budget_tokens
        self.calls: list[CallRecord] = []
        for name, value in state.items():
            setattr(self, name, value)
        self.parent: Agent | None = None
        for name, sub in self.subagents().items():
            if name not in state:
                setattr(self, name, sub(gateway=gateway, run_id=run_id, settings=settings))
            getattr(self, name).parent = self  # its calls count against this agent's budget too

    # -- the class's parts ------------------------------------------------
    @classmethod
    def subagents(cls) -> dict[str, type[Agent]]:
        """Annotated attributes whose type is an Agent subclass: built with the parent."""
        out: dict[str, type[Agent]] = {}
        for klass in reversed(cls.__mro__):
            module = inspect.getmodule(klass)
            for name, ann in vars(klass).get("__annotations__", {}).items():
                if isinstance(ann, str):
                    ann = (vars(module) if module else {}).get(ann, ann)
                if isinstance(ann, type) and issubclass(ann, Agent):
                    out[name] = ann
        return out

    @classmethod
    def completed_methods(cls) -> dict[str, MethodSpec]:
        """Every completed method of the class, by name: the prompts it can send."""
        return {name: d.spec() for name, d in sorted(cls._completed.items())}

    @classmethod
    def offline(cls, method: str) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
        """Register `fn(agent, **arguments)` as the deterministic implementation of a
        completed method, used when no model serves the agent's role."""
        if method not in cls._completed:
            raise ValueError(f"{cls.__name__} has no completed method {method!r}")

        def register(fn: Callable[..., Any]) -> Callable[..., Any]:
            cls._offline[method] = fn
            return fn

        return register

    @classmethod
    def offline_impl(cls, method: str) -> Callable[..., Any] | None:
        for klass in cls.__mro__:
            impl = vars(klass).get("_offline", {}).get(method)
            if impl is not None:
                return impl
        return None

    # -- completion -------------------------------------------------------
    def role_of(self, method: str) -> str:
        return self._completed[method].spec().role or self.role

    def model_for(self, method: str) -> str:
        """The model string that completes `method` now, or "offline"."""
        role = self.role_of(method)
        if self.gateway is None:
            return "offline"
        available = getattr(self.gateway, "available", None)
        if available is not None and not available(role):
            return "offline"
        try:
            return str(self.gateway.model_for(role))
        except (AttributeError, ValueError):  # a gateway that names no model (a test's own object)
            return "model"

    def complete(self, method: str, *args: Any, **kwargs: Any) -> Any:
        """Call completed method `method`: its model, else its offline implementation."""
        spec = self._completed[method].spec()
        bound = spec.signature.bind(self, *args, **kwargs)
        bound.apply_defaults()
        values = {n: bound.arguments[n] for n, _ in spec.params}
        if self.model_for(method) == "offline":
            impl = self.offline_impl(method)
            if impl is None:
                raise CompletionFailed(method, "no model is configured for it and it has no offline implementation")
            self.calls.append(CallRecord(method, "offline"))
            return impl(self, **values)
        return self._by_model(spec, values)

    def ask_model(self, method: str, *args: Any, **kwargs: Any) -> Any:
        """Call completed method `method` with its model only (no offline implementation)."""
        spec = self._completed[method].spec()
        bound = spec.signature.bind(self, *args, **kwargs)
        bound.apply_defaults()
        return self._by_model(spec, {n: bound.arguments[n] for n, _ in spec.params})

    def spent_tokens(self) -> int:
        """Tokens this agent's calls spent, its sub-agents' included."""
        return sum(c.tokens for c in self.calls) + sum(getattr(self, n).spent_tokens() for n in self.subagents())

    def _over_budget(self, need: int) -> str | None:
        """Why a call of ~`need` tokens would cross this agent's budget or an enclosing one's."""
        agent: Agent | None = self
        while agent is not None:
            if agent.budget_tokens is not None and agent.spent_tokens() + need > agent.budget_tokens:
                return (
                    f"{type(agent).__name__}'s own token budget spent: {agent.spent_tokens()} used"
                    f" + ~{need} needed > {agent.budget_tokens}"
                )
            agent = agent.parent
        return None

    def _by_model(self, spec: MethodSpec, values: dict[str, Any]) -> Any:
        from backchannel.agent.models import BudgetExhausted, GatewayError, estimate_tokens, parse_output

        messages = spec.messages(values)
        model = self.model_for(spec.name)
        reason = self._over_budget(estimate_tokens(messages))
        if reason:
            self.calls.append(CallRecord(spec.name, model, 0, "budget_stopped", reason))
            raise CompletionFailed(spec.name, reason, budget=True)
        answer = spec.answer_model
        from backchannel.memory.edges import EdgeStopped

        evidence_ids = [i for v in values.values() for i in getattr(v, "_evidence_ids", None) or []]
        try:
            done = self.gateway.complete(
                spec.role or self.role,
                messages,
                run_id=self.run_id,
                response_model=answer,
                evidence_ids=evidence_ids or None,
            )
            tokens = int(getattr(done, "prompt_tokens", 0) or 0) + int(getattr(done, "completion_tokens", 0) or 0)
            parsed = done.parsed if isinstance(done.parsed, answer) else parse_output(done.text, answer)
            value = spec.unwrap(parsed)
        except EdgeStopped:  # a limit of [edges.*] stops the run; no fallback may soften it
            self.calls.append(CallRecord(spec.name, model, 0, "failed", "stopped at an edge"))
            raise
        except BudgetExhausted as exc:
            self.calls.append(CallRecord(spec.name, model, 0, "budget_stopped", exc.reason))
            raise CompletionFailed(spec.name, f"budget: {exc.reason}", budget=True) from None
        except GatewayError as exc:  # the gateway recorded every attempt; its message says what failed
            self.calls.append(CallRecord(spec.name, model, 0, "failed", str(exc)))
            raise CompletionFailed(spec.name, str(exc)) from None
        except (ValidationError, ValueError) as exc:  # an answer the gateway did not validate itself
            self.calls.append(CallRecord(spec.name, model, 0, "failed", f"{type(exc).__name__}: {exc}"))
            raise CompletionFailed(spec.name, f"invalid {type_name(spec.returns)}: {exc}") from None
        except Exception as exc:  # noqa: BLE001 - whatever else a model call raises is a failure, never a crash
            self.calls.append(CallRecord(spec.name, model, 0, "failed", f"{type(exc).__name__}: {exc}"))
            raise CompletionFailed(spec.name, f"{type(exc).__name__}: {exc}") from None
        self.calls.append(CallRecord(spec.name, str(getattr(done, "model", model)), tokens))
        self.last_model = str(getattr(done, "model", model))
        return value

    def model_messages(
        self, role: str | None, messages: list[dict[str, Any]], *, response_model: type[BaseModel] | None = None
    ) -> Any:
        """A call for a method with a body that writes its own prompt (the sweeper's
        program): the agent's model, its budget and its call record, as for a completed one."""
        from backchannel.agent.models import BudgetExhausted, estimate_tokens

        role = role or self.role
        reason = self._over_budget(estimate_tokens(messages))
        if reason:
            self.calls.append(CallRecord(role, self.gateway.model_for(role), 0, "budget_stopped", reason))
            raise BudgetExhausted(reason)
        done = self.gateway.complete(role, messages, run_id=self.run_id, response_model=response_model)
        tokens = int(getattr(done, "prompt_tokens", 0) or 0) + int(getattr(done, "completion_tokens", 0) or 0)
        self.calls.append(CallRecord(role, str(getattr(done, "model", "")), tokens))
        return done


def describe(agent_cls: type[Agent], settings: Any = None) -> list[dict[str, Any]]:
    """Per method of `agent_cls` (and of its sub-agents, prefixed): how it runs under
    `settings` ("python", "model" with its model string, or "offline" with its
    implementation), for `backchannel skills`."""
    models = getattr(settings, "models", None)
    out: list[dict[str, Any]] = []
    own: dict[str, Any] = {}
    for klass in reversed(agent_cls.__mro__):
        if issubclass(klass, Agent) and klass is not Agent:
            own.update(vars(klass))
    for name, fn in sorted(own.items()):
        if name.startswith("_") or not (inspect.isfunction(fn) or isinstance(fn, _Completed)):
            continue
        if isinstance(fn, _Completed):
            spec = fn.spec()
            role = spec.role or agent_cls.role
            from backchannel.agent.models import ROLE_FIELDS

            model = getattr(models, ROLE_FIELDS.get(role, role), "offline") if models is not None else "offline"
            impl = agent_cls.offline_impl(name)
            out.append(
                {
                    "agent": agent_cls.__name__,
                    "method": name,
                    "runs": "offline" if model == "offline" else "model",
                    "model": None if model == "offline" else model,
                    "role": role,
                    "offline": f"{impl.__module__}.{impl.__qualname__}" if impl else None,
                    "returns": type_name(spec.returns),
                }
            )
        else:
            out.append(
                {
                    "agent": agent_cls.__name__,
                    "method": name,
                    "runs": "python",
                    "model": None,
                    "role": None,
                    "offline": None,
                    "returns": None,
                }
            )
    from backchannel.agent.models import ROLE_FIELDS

    for name, sub in sorted(agent_cls.subagents().items()):
        model = getattr(models, ROLE_FIELDS.get(sub.role, sub.role), "offline") if models is not None else "offline"
        out.append(
            {
                "agent": agent_cls.__name__,
                "method": name,
                "runs": "agent",
                "model": model,
                "role": sub.role,
                "offline": None,
                "returns": sub.__name__,
            }
        )
    return out
