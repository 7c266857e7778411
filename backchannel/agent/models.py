"""The model gateway: the only module that imports litellm (lazily).

Every call goes through `Gateway.complete()`, which
- maps the role to the configured model (`[models]` extract / sweep / draft;
  judge and resolve use draft and extract), then tries the `fallbacks` in order;
- checks the per-run and per-day budgets before every attempt and raises
  `BudgetExhausted` (recorded) when one is spent;
- retries rate limits, timeouts, server and connection errors with exponential
  backoff, honouring Retry-After on a 429 (capped);
- asks for structured output (json_schema where litellm says the provider
  supports it, JSON mode otherwise), validates it locally with pydantic, sends
  the validation error back once (the repair attempt) and raises
  `InvalidOutput` if that fails too;
- records every attempt, failures included, in `model_calls`.

Keys come from the secrets dir (`<provider>_api_key`), else litellm reads the
provider's usual environment variable; never from the TOML file.

The rows are written with the store's connection as they happen: call the
gateway outside any transaction that might roll back, or the audit rows of a
failed source would vanish with it.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import re
import time
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel, ValidationError

from backchannel.agent import budget as budgets
from backchannel.config import Paths, Settings, read_secret
from backchannel.memory.store import Store, utcnow

log = logging.getLogger(__name__)

# role -> the [models] field that configures it
ROLE_FIELDS = {"extract": "extract", "sweep": "sweep", "draft": "draft", "judge": "draft", "resolve": "extract"}
MAX_BACKOFF_S = 30.0  # exponential backoff never waits longer than this
MAX_RETRY_AFTER_S = 60.0  # nor does a server's Retry-After
REPAIR_PROMPT = (
    "Your previous answer could not be used: {error}\n"
    "Answer again with only the JSON object, matching the schema exactly, and nothing else."
)


class GatewayError(Exception):
    """Base of the gateway's errors."""


class OfflineRole(GatewayError):
    """The role is configured "offline": the caller must use its offline path."""


class BudgetExhausted(GatewayError):
    """A budget is spent; the call was not made. `reason` says which."""

    def __init__(self, reason: str):
        self.reason = reason
        super().__init__(reason)


class ModelError(GatewayError):
    """Every model in the chain failed after its retries."""


class InvalidOutput(GatewayError):
    """The answer did not validate, even after the repair attempt."""

    def __init__(self, message: str, text: str = ""):
        self.text = text
        super().__init__(message)


@dataclass
class Completion:
    text: str
    parsed: BaseModel | None
    model: str
    prompt_tokens: int | None
    completion_tokens: int | None
    cost_usd: float | None
    latency_ms: int


class _ModelFailed(Exception):
    """Internal: one model gave up after its retries; try the next one."""


_litellm: Any = None


def load_litellm() -> Any:
    """Import litellm once, with the local price map and no telemetry or callbacks."""
    global _litellm
    if _litellm is None:
        # Before the import: otherwise litellm fetches a price map from the internet.
        os.environ["LITELLM_LOCAL_MODEL_COST_MAP"] = "True"
        import litellm

        litellm.telemetry = False
        litellm.suppress_debug_info = True
        litellm.success_callback = []
        litellm.failure_callback = []
        litellm.callbacks = []
        litellm.set_verbose = False
        _litellm = litellm
    return _litellm


def prompt_hash(messages: list[dict[str, Any]]) -> str:
    canonical = json.dumps(messages, sort_keys=True, ensure_ascii=False, default=str)
    return hashlib.sha256(canonical.encode()).hexdigest()[:16]


def estimate_tokens(messages: list[dict[str, Any]]) -> int:
    """A cheap estimate (4 characters a token) for the budget check before a call."""
    return sum(len(str(m.get("content") or "")) for m in messages) // 4 + 4 * len(messages)


_FENCE = re.compile(r"^\s*```(?:json)?\s*(.*?)\s*```\s*$", re.S)


def parse_output(text: str, model: type[BaseModel]) -> BaseModel:
    """Validate an answer against `model`; tolerates a ``` fence around the JSON."""
    m = _FENCE.match(text or "")
    return model.model_validate_json(m.group(1) if m else (text or ""))


def _retry_after(exc: Exception) -> float | None:
    for headers in (getattr(exc, "litellm_response_headers", None),
                    getattr(getattr(exc, "response", None), "headers", None)):
        if not headers:
            continue
        try:
            value = headers.get("retry-after") or headers.get("Retry-After")
        except Exception:  # headers of an unexpected type: no hint
            value = None
        if value:
            try:
                return max(0.0, float(value))
            except ValueError:
                return None  # an HTTP date: fall back to our own backoff
    return None


def _classify(lt: Any, exc: Exception) -> tuple[str, bool]:
    """(outcome, retryable) for an exception raised by litellm.completion."""
    if isinstance(exc, lt.RateLimitError):
        return "rate_limited", True
    if isinstance(exc, lt.Timeout):
        return "timeout", True
    retryable = (lt.InternalServerError, lt.ServiceUnavailableError, lt.APIConnectionError, lt.BadGatewayError)
    if isinstance(exc, retryable):
        return "error", True
    return "error", False


class Gateway:
    def __init__(self, settings: Settings, store: Store, paths: Paths):
        self.settings = settings
        self.store = store
        self.paths = paths
        self.sleep = time.sleep  # tests and benches may shorten waits

    # -- configuration ----------------------------------------------------
    def model_for(self, role: str) -> str:
        if role not in ROLE_FIELDS:
            raise ValueError(f"unknown model role {role!r}; expected one of {sorted(ROLE_FIELDS)}")
        return getattr(self.settings.models, ROLE_FIELDS[role])

    def available(self, role: str) -> bool:
        """True when the role has a real model (not "offline")."""
        return self.model_for(role) != "offline"

    def _chain(self, role: str) -> list[str]:
        primary = self.model_for(role)
        if primary == "offline":
            raise OfflineRole(f"model role {role!r} is configured offline")
        chain = [primary]
        for m in self.settings.models.fallbacks:
            if m not in chain and m != "offline":
                chain.append(m)
        return chain

    def _call_kwargs(self, model: str, primary: str) -> dict[str, Any]:
        provider = model.split("/", 1)[0]
        kw: dict[str, Any] = {}
        key = read_secret(self.paths, f"{provider}_api_key")
        if key:
            kw["api_key"] = key
        # The one api_base belongs to the primary model's provider (a local
        # server); a fallback at another provider uses that provider's default.
        if self.settings.models.api_base and provider == primary.split("/", 1)[0]:
            kw["api_base"] = self.settings.models.api_base
        return kw

    # -- recording --------------------------------------------------------
    def _record(self, *, run_id: str | None, role: str, model: str, attempt: int, repair: bool,
                outcome: str, phash: str, latency_ms: int | None = None, prompt_tokens: int | None = None,
                completion_tokens: int | None = None, cost_usd: float | None = None,
                error: str | None = None) -> None:
        self.store.con.execute(
            "INSERT INTO model_calls (run_id, role, model, attempt, repair, prompt_tokens, completion_tokens,"
            " cost_usd, latency_ms, outcome, error, prompt_hash, created_at)"
            " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            [run_id, role, model, attempt, repair, prompt_tokens, completion_tokens, cost_usd, latency_ms,
             outcome, (error or "")[:2000] or None, phash, utcnow()],
        )

    # -- the call ---------------------------------------------------------
    def complete(self, role: str, messages: list[dict[str, Any]], *, run_id: str | None,
                 response_model: type[BaseModel] | None = None, max_tokens: int | None = None) -> Completion:
        """One completion for `role`. See the module docstring for what it guarantees."""
        chain = self._chain(role)
        lt = load_litellm()
        failures: list[str] = []
        for model in chain:
            msgs = list(messages)
            repairs_left = self.settings.models.max_repair_attempts
            repair = False
            try:
                while True:
                    resp, latency_ms, attempt = self._attempts(lt, role, model, chain[0], msgs, run_id,
                                                               response_model, max_tokens, repair)
                    text = (resp.choices[0].message.content or "") if resp.choices else ""
                    usage = getattr(resp, "usage", None)
                    pt = getattr(usage, "prompt_tokens", None)
                    ct = getattr(usage, "completion_tokens", None)
                    cost = self._cost(lt, resp)
                    record = dict(run_id=run_id, role=role, model=model, attempt=attempt, repair=repair,
                                  phash=prompt_hash(msgs), latency_ms=latency_ms, prompt_tokens=pt,
                                  completion_tokens=ct, cost_usd=cost)
                    parsed = None
                    if response_model is not None:
                        try:
                            parsed = parse_output(text, response_model)
                        except ValidationError as exc:
                            error = _short_error(exc)
                            self._record(outcome="invalid_output", error=error, **record)
                            if repairs_left <= 0:
                                raise InvalidOutput(f"{model} gave invalid {response_model.__name__}: {error}",
                                                    text) from None
                            repairs_left -= 1
                            repair = True
                            msgs = msgs + [{"role": "assistant", "content": text},
                                           {"role": "user", "content": REPAIR_PROMPT.format(error=error)}]
                            continue
                    self._record(outcome="ok", **record)
                    return Completion(text, parsed, model, pt, ct, cost, latency_ms)
            except _ModelFailed as exc:
                failures.append(f"{model}: {exc}")
        raise ModelError("every model failed: " + "; ".join(failures))

    def _attempts(self, lt: Any, role: str, model: str, primary: str, msgs: list[dict[str, Any]],
                  run_id: str | None, response_model: type[BaseModel] | None, max_tokens: int | None,
                  repair: bool) -> tuple[Any, int, int]:
        """Call one model with retries; returns (response, latency_ms, attempt) or raises _ModelFailed."""
        ms = self.settings.models
        phash = prompt_hash(msgs)
        kwargs = self._call_kwargs(model, primary)
        call_msgs, fmt = self._structured(lt, model, msgs, response_model)
        attempts = max(1, ms.retries + 1)
        for attempt in range(1, attempts + 1):
            reason = budgets.check(self.store, ms.budget, run_id, next_tokens=estimate_tokens(call_msgs))
            if reason:
                self._record(run_id=run_id, role=role, model=model, attempt=attempt, repair=repair,
                             outcome="budget_stopped", phash=phash, error=reason)
                raise BudgetExhausted(reason)
            t0 = time.monotonic()
            try:
                resp = lt.completion(model=model, messages=call_msgs, timeout=ms.timeout_s, max_tokens=max_tokens,
                                     response_format=fmt, num_retries=0, max_retries=0, drop_params=True,
                                     **kwargs)
            except Exception as exc:  # litellm maps provider errors to its own types
                latency_ms = int((time.monotonic() - t0) * 1000)
                outcome, retryable = _classify(lt, exc)
                self._record(run_id=run_id, role=role, model=model, attempt=attempt, repair=repair,
                             outcome=outcome, phash=phash, latency_ms=latency_ms,
                             error=f"{type(exc).__name__}: {exc}")
                if not retryable or attempt == attempts:
                    raise _ModelFailed(f"{outcome} after {attempt} attempt(s): {type(exc).__name__}") from exc
                wait = min(MAX_BACKOFF_S, ms.backoff_s * 2 ** (attempt - 1))
                hint = _retry_after(exc) if outcome == "rate_limited" else None
                if hint is not None:
                    wait = min(MAX_RETRY_AFTER_S, hint)
                log.info("model %s %s (attempt %d/%d); retrying in %.2fs", model, outcome, attempt, attempts, wait)
                self.sleep(wait)
                continue
            return resp, int((time.monotonic() - t0) * 1000), attempt
        raise _ModelFailed("no attempt made")  # unreachable: attempts >= 1

    def _structured(self, lt: Any, model: str, msgs: list[dict[str, Any]],
                    response_model: type[BaseModel] | None) -> tuple[list[dict[str, Any]], dict | None]:
        if response_model is None:
            return msgs, None
        schema = response_model.model_json_schema()
        try:
            native = bool(lt.supports_response_schema(model=model))
        except Exception:  # an unknown model: assume no schema support
            native = False
        if native:
            return msgs, {"type": "json_schema",
                          "json_schema": {"name": response_model.__name__, "schema": schema, "strict": False}}
        # JSON mode: the schema travels in the prompt instead, after the leading system messages.
        hint = {"role": "system", "content": "Answer with one JSON object matching this JSON schema:\n"
                + json.dumps(schema, separators=(",", ":"))}
        n = 0
        while n < len(msgs) and msgs[n].get("role") == "system":
            n += 1
        return [*msgs[:n], hint, *msgs[n:]], {"type": "json_object"}

    @staticmethod
    def _cost(lt: Any, resp: Any) -> float | None:
        try:
            cost = lt.completion_cost(completion_response=resp)
        except Exception:  # not in the price map (local or scripted models): unknown, not zero
            return None
        return None if cost is None else float(cost)


def _short_error(exc: ValidationError) -> str:
    parts = []
    for e in exc.errors()[:8]:
        loc = ".".join(str(p) for p in e.get("loc", ())) or "(root)"
        parts.append(f"{loc}: {e.get('msg')}")
    return "; ".join(parts)
