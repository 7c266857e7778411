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
- records every attempt, failures included, in `model_calls` (a server that
  reports no usage is charged an estimate, so token budgets still bind);
- never lets a key reach the audit rows, its error messages or the logs of
  litellm and its HTTP clients (`redact`); a missing key fails at once, saying
  where to put it.

Keys come from the secrets dir (`<provider>_api_key`), else litellm reads the
provider's usual environment variable; never from the TOML file.

The audit rows are written, and the budgets read, through a connection of
the gateway's own (a cursor of the store's) that commits each row at once: a
caller's transaction that rolls back after a call (the writer's, around an
entity-resolution call) cannot erase what the call spent.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import logging
import os
import re
import time
from collections.abc import Iterator
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
        _quiet_loggers()
        _litellm = litellm
    return _litellm


# Loggers of litellm and the HTTP clients under it. litellm's debug lines carry raw
# provider errors and responses (a provider may echo the key; answers are user data).
_NOISY_LOGGERS = ("LiteLLM", "LiteLLM Router", "LiteLLM Proxy")
_CLIENT_LOGGERS = ("httpx", "httpcore", "openai", "openai._base_client", "anthropic", "anthropic._base_client")


class _RedactFilter(logging.Filter):
    """Redacts keys from a record's message (see `redact`) before any handler sees it."""

    def filter(self, record: logging.LogRecord) -> bool:
        try:
            msg = record.getMessage()
        except Exception:  # a malformed record: leave it to logging's own error path
            return True
        clean = redact(msg)
        if clean != msg:
            record.msg, record.args = clean, None
        return True


def _quiet_loggers() -> None:
    for name in _NOISY_LOGGERS:
        logging.getLogger(name).setLevel(logging.WARNING)
    for name in (*_NOISY_LOGGERS, *_CLIENT_LOGGERS):
        lg = logging.getLogger(name)
        if not any(isinstance(f, _RedactFilter) for f in lg.filters):
            lg.addFilter(_RedactFilter())


def prompt_hash(messages: list[dict[str, Any]]) -> str:
    canonical = json.dumps(messages, sort_keys=True, ensure_ascii=False, default=str)
    return hashlib.sha256(canonical.encode()).hexdigest()[:16]


def estimate_tokens(messages: list[dict[str, Any]]) -> int:
    """A cheap estimate (4 characters a token) for the budget check before a call."""
    return sum(len(str(m.get("content") or "")) for m in messages) // 4 + 4 * len(messages)


_known_keys: set[str] = set()  # keys the gateway read from the secrets dir, for `redact`
_KEY_SHAPES = re.compile(
    r"(?i)(bearer\s+|x-api-key[\"':=\s]+|api[_-]?key[\"':=\s]+)[A-Za-z0-9._~+/=-]{6,}"
    r"|\b(sk|pk|rk|gsk|xai|hf|sk-ant|sk-proj|AIza)[-_]?[A-Za-z0-9_-]{12,}"
)


def redact(text: str, *secrets: str | None) -> str:
    """`text` with the given secrets, any `*_API_KEY` value of the environment and
    anything shaped like a key or bearer token replaced by [redacted]."""
    values = {s for s in (*secrets, *_known_keys) if s and len(s) >= 6}
    values |= {v for k, v in os.environ.items() if k.upper().endswith(("_API_KEY", "_TOKEN")) and v and len(v) >= 6}
    for v in sorted(values, key=len, reverse=True):
        text = text.replace(v, "[redacted]")
    return _KEY_SHAPES.sub(lambda m: (m.group(1) or "") + "[redacted]", text)


_FENCE = re.compile(r"^\s*```(?:json)?\s*(.*?)\s*```\s*$", re.S)


def parse_output(text: str, model: type[BaseModel]) -> BaseModel:
    """Validate an answer against `model`; tolerates a ``` fence around the JSON."""
    m = _FENCE.match(text or "")
    return model.model_validate_json(m.group(1) if m else (text or ""))


def _retry_after(exc: Exception) -> float | None:
    for headers in (
        getattr(exc, "litellm_response_headers", None),
        getattr(getattr(exc, "response", None), "headers", None),
    ):
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
        self._edge: Any = None  # the edge crossing of the complete() under way (agent/model_edge.py)

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
            _known_keys.add(key)
        # The one api_base belongs to the primary model's provider (a local
        # server); a fallback at another provider uses that provider's default.
        if self.settings.models.api_base and provider == primary.split("/", 1)[0]:
            kw["api_base"] = self.settings.models.api_base
        return kw

    @staticmethod
    def _prepare(chain: list[str]) -> None:
        """Model providers from plugins make the chain's models ready (agent/plugins.py)."""
        from backchannel.agent import plugins

        try:
            plugins.prepare_models(chain)
        except ValueError as exc:
            raise ModelError(str(exc)) from None

    # -- recording --------------------------------------------------------
    @contextlib.contextmanager
    def _audit(self) -> Iterator[Any]:
        """A short-lived connection of its own: autocommit, outside any caller's
        transaction, and closed at once so it never holds the file open."""
        cur = self.store.con.cursor()
        try:
            yield cur
        finally:
            cur.close()

    def last_call_id(self) -> int:
        """The id of the latest audit row (0 when none): count calls made since."""
        with self._audit() as con:
            return int(con.execute("SELECT coalesce(max(id), 0) FROM model_calls").fetchone()[0])

    def calls_since(self, call_id: int) -> int:
        """How many attempts were recorded after audit row `call_id`."""
        with self._audit() as con:
            return int(con.execute("SELECT count(*) FROM model_calls WHERE id > ?", [call_id]).fetchone()[0])

    def _check_budget(
        self, run_id: str | None, role: str, model: str, attempt: int, repair: bool, phash: str, next_tokens: int
    ) -> None:
        """Record a budget stop and raise BudgetExhausted when the next call may not be made
        (and EdgeStopped when the role's `[edges.ROLE] max_tokens` would be crossed)."""
        if self._edge is not None:
            self._edge.check_tokens(next_tokens)
        with self._audit() as con:
            reason = budgets.check(self.store, self.settings.models.budget, run_id, next_tokens=next_tokens, con=con)
        if reason:
            self._record(
                run_id=run_id,
                role=role,
                model=model,
                attempt=attempt,
                repair=repair,
                outcome="budget_stopped",
                phash=phash,
                error=reason,
            )
            raise BudgetExhausted(reason)

    def _record(
        self,
        *,
        run_id: str | None,
        role: str,
        model: str,
        attempt: int,
        repair: bool,
        outcome: str,
        phash: str,
        latency_ms: int | None = None,
        prompt_tokens: int | None = None,
        completion_tokens: int | None = None,
        cost_usd: float | None = None,
        error: str | None = None,
    ) -> None:
        with self._audit() as con:
            con.execute(
                "INSERT INTO model_calls (run_id, role, model, attempt, repair, prompt_tokens, completion_tokens,"
                " cost_usd, latency_ms, outcome, error, prompt_hash, created_at)"
                " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                [
                    run_id,
                    role,
                    model,
                    attempt,
                    repair,
                    prompt_tokens,
                    completion_tokens,
                    cost_usd,
                    latency_ms,
                    outcome,
                    (error or "")[:2000] or None,
                    phash,
                    utcnow(),
                ],
            )

    # -- the call ---------------------------------------------------------
    def complete(
        self,
        role: str,
        messages: list[dict[str, Any]],
        *,
        run_id: str | None,
        response_model: type[BaseModel] | None = None,
        max_tokens: int | None = None,
        evidence_ids: list[int] | None = None,
    ) -> Completion:
        """One completion for `role`. See the module docstring for what it guarantees.
        It is one crossing of the role's edge (agent/model_edge.py): `[edges.ROLE]` limits
        are checked before anything is sent, and one `edges` row records it; `evidence_ids`
        are the assertions whose excerpts the messages carry."""
        from backchannel.agent.model_edge import ModelEdgeCall

        edge = ModelEdgeCall(self, role, messages, run_id, evidence_ids, self._chain(role))
        chain = edge.admit()
        self._edge = edge
        try:
            done = self._complete(
                role, chain, messages, run_id=run_id, response_model=response_model, max_tokens=max_tokens
            )
        except GatewayError as exc:  # a spent [models.budget] too: "stopped" is an edge's own limit
            edge.finish(None, "failed", str(exc))
            raise
        finally:
            self._edge = None
        edge.finish(done.model)
        return done

    def _complete(
        self,
        role: str,
        chain: list[str],
        messages: list[dict[str, Any]],
        *,
        run_id: str | None,
        response_model: type[BaseModel] | None,
        max_tokens: int | None,
    ) -> Completion:
        # A spent budget refuses before litellm is even imported (seconds saved per
        # deferred file); the check before each attempt below stays the authority.
        self._check_budget(run_id, role, chain[0], 1, False, prompt_hash(messages), estimate_tokens(messages))
        lt = load_litellm()
        self._prepare(chain)
        failures: list[str] = []
        for model in chain:
            msgs = list(messages)
            repairs_left = self.settings.models.max_repair_attempts
            repair = False
            try:
                while True:
                    resp, latency_ms, attempt = self._attempts(
                        lt, role, model, chain[0], msgs, run_id, response_model, max_tokens, repair
                    )
                    text = (resp.choices[0].message.content or "") if resp.choices else ""
                    usage = getattr(resp, "usage", None)
                    pt = getattr(usage, "prompt_tokens", None)
                    ct = getattr(usage, "completion_tokens", None)
                    if not pt and not ct:
                        # A server that reports no usage is charged an estimate, so that
                        # token budgets still bind (4 characters a token).
                        pt, ct = estimate_tokens(msgs), (len(text) + 3) // 4
                    cost = self._cost(lt, resp)
                    record: dict[str, Any] = dict(
                        run_id=run_id,
                        role=role,
                        model=model,
                        attempt=attempt,
                        repair=repair,
                        phash=prompt_hash(msgs),
                        latency_ms=latency_ms,
                        prompt_tokens=pt,
                        completion_tokens=ct,
                        cost_usd=cost,
                    )
                    parsed = None
                    if response_model is not None:
                        try:
                            parsed = parse_output(text, response_model)
                        except ValidationError as exc:
                            error = _short_error(exc)
                            self._record(outcome="invalid_output", error=error, **record)
                            if repairs_left <= 0:
                                raise InvalidOutput(
                                    f"{model} gave invalid {response_model.__name__}: {error}", text
                                ) from None
                            repairs_left -= 1
                            repair = True
                            msgs = msgs + [
                                {"role": "assistant", "content": text},
                                {"role": "user", "content": REPAIR_PROMPT.format(error=error)},
                            ]
                            continue
                    self._record(outcome="ok", **record)
                    return Completion(text, parsed, model, pt, ct, cost, latency_ms)
            except _ModelFailed as exc:
                failures.append(f"{model}: {exc}")
        raise ModelError("every model failed: " + "; ".join(failures))

    def _attempts(
        self,
        lt: Any,
        role: str,
        model: str,
        primary: str,
        msgs: list[dict[str, Any]],
        run_id: str | None,
        response_model: type[BaseModel] | None,
        max_tokens: int | None,
        repair: bool,
    ) -> tuple[Any, int, int]:
        """Call one model with retries; returns (response, latency_ms, attempt) or raises _ModelFailed."""
        ms = self.settings.models
        phash = prompt_hash(msgs)
        kwargs = self._call_kwargs(model, primary)
        call_msgs, fmt = self._structured(lt, model, msgs, response_model)
        attempts = max(1, ms.retries + 1)
        for attempt in range(1, attempts + 1):
            self._check_budget(run_id, role, model, attempt, repair, phash, estimate_tokens(call_msgs))
            t0 = time.monotonic()
            try:
                resp = lt.completion(
                    model=model,
                    messages=call_msgs,
                    timeout=ms.timeout_s,
                    max_tokens=max_tokens,
                    response_format=fmt,
                    num_retries=0,
                    max_retries=0,
                    drop_params=True,
                    **kwargs,
                )
            except Exception as exc:  # litellm maps provider errors to its own types
                latency_ms = int((time.monotonic() - t0) * 1000)
                outcome, retryable = _classify(lt, exc)
                # A provider may echo the key in its error: never let it reach the audit rows.
                error = redact(f"{type(exc).__name__}: {exc}", kwargs.get("api_key"))
                if _missing_key(exc):
                    retryable = False  # no retry can find a key
                    error += (
                        f" (put the key in {self.paths.secrets_dirs[-1] / (model.split('/', 1)[0] + '_api_key')}"
                        " or the provider's environment variable)"
                    )
                self._record(
                    run_id=run_id,
                    role=role,
                    model=model,
                    attempt=attempt,
                    repair=repair,
                    outcome=outcome,
                    phash=phash,
                    latency_ms=latency_ms,
                    error=error,
                )
                if not retryable or attempt == attempts:
                    raise _ModelFailed(f"{outcome} after {attempt} attempt(s): {_brief(error)}") from None
                wait = min(MAX_BACKOFF_S, ms.backoff_s * 2 ** (attempt - 1))
                hint = _retry_after(exc) if outcome == "rate_limited" else None
                if hint is not None:
                    wait = min(MAX_RETRY_AFTER_S, hint)
                log.info("model %s %s (attempt %d/%d); retrying in %.2fs", model, outcome, attempt, attempts, wait)
                self.sleep(wait)
                continue
            return resp, int((time.monotonic() - t0) * 1000), attempt
        raise _ModelFailed("no attempt made")  # unreachable: attempts >= 1

    def _structured(
        self, lt: Any, model: str, msgs: list[dict[str, Any]], response_model: type[BaseModel] | None
    ) -> tuple[list[dict[str, Any]], dict | None]:
        if response_model is None:
            return msgs, None
        schema = response_model.model_json_schema()
        try:
            native = bool(lt.supports_response_schema(model=model))
        except Exception:  # an unknown model: assume no schema support
            native = False
        if native:
            return msgs, {
                "type": "json_schema",
                "json_schema": {"name": response_model.__name__, "schema": schema, "strict": False},
            }
        # JSON mode: the schema travels in the prompt instead, after the leading system messages.
        hint = {
            "role": "system",
            "content": "Answer with one JSON object matching this JSON schema:\n"
            + json.dumps(schema, separators=(",", ":")),
        }
        n = 0
        while n < len(msgs) and msgs[n].get("role") == "system":
            n += 1
        return [*msgs[:n], hint, *msgs[n:]], {"type": "json_object"}

    @staticmethod
    def _cost(lt: Any, resp: Any) -> float | None:
        try:
            cost = lt.completion_cost(completion_response=resp)
        except Exception:  # not in the price map (local or plugin models): unknown, not zero
            return None
        return None if cost is None else float(cost)


def _missing_key(exc: Exception) -> bool:
    text = str(exc).casefold()
    return "missing credentials" in text or "api_key client option must be set" in text


def _brief(error: str, limit: int = 300) -> str:
    """An error for a message to the user: litellm's repeated prefixes dropped, cut to `limit`."""
    error = re.sub(r"(litellm\.)?\w+Error: ", "", error, count=3) or error
    return error if len(error) <= limit else error[: limit - 1] + "…"


def _short_error(exc: ValidationError) -> str:
    parts = []
    for e in exc.errors()[:8]:
        loc = ".".join(str(p) for p in e.get("loc", ())) or "(root)"
        parts.append(f"{loc}: {e.get('msg')}")
    return "; ".join(parts)
