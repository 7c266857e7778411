"""What a message says: a proposal (or a digest of several) rendered from the
jinja2 templates shipped as package data. HTML templates autoescape, so text
that came from a transcript can never inject markup into a mail or a page."""

from __future__ import annotations

import json
from functools import lru_cache
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from jinja2 import Environment

    from backchannel.memory.store import Store

from backchannel.config import Paths, Settings
from backchannel.delivery.approval import parse_action
from backchannel.delivery.links import links_for
from backchannel.memory import proposals


@lru_cache(maxsize=1)
def _env() -> Environment:
    from jinja2 import Environment, PackageLoader, StrictUndefined, select_autoescape

    return Environment(
        loader=PackageLoader("backchannel.delivery", "templates"),
        autoescape=select_autoescape(enabled_extensions=("html.j2",), default_for_string=False),
        undefined=StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
    )


def render(name: str, **context: Any) -> str:
    return _env().get_template(name).render(**context)


def load_proposal(store: Store, proposal_id: str) -> dict[str, Any] | None:
    p = proposals.row(store, proposal_id)
    if p is None:
        return None
    ev = p.get("evidence")
    p["evidence"] = json.loads(ev) if isinstance(ev, str) else (ev or [])
    p["action"] = parse_action(p.get("action"))
    p["entity_ids"] = list(p.get("entity_ids") or [])
    return p


def view(settings: Settings, paths: Paths, proposal: dict[str, Any]) -> dict[str, Any]:
    """The template context for one proposal: its text, evidence and signed links.
    `why_shown` and `evidence_shown` leave out what the body already says (template
    drafts include both), and `action_problem` says why the draft cannot be approved
    as it stands (None: it can)."""
    from backchannel.delivery.approval import problem

    body = proposal["body"] or ""
    why = (proposal.get("why") or "").strip()
    v: dict[str, Any] = {
        "id": proposal["id"],
        "kind": proposal["kind"],
        "title": proposal["title"],
        "body": body,
        "why": why,
        "why_shown": "" if why and why in body else why,
        "score": float(proposal.get("score") or 0.0),
        "action_problem": problem(proposal.get("action")),
        "evidence": [
            {
                "quote": str(e.get("quote") or ""),
                "speaker": str(e.get("speaker") or ""),
                "said_at": str(e.get("said_at") or "")[:10],
                "source_id": str(e.get("source_id") or ""),
            }
            for e in proposal.get("evidence") or []
            if isinstance(e, dict)
        ],
        "action": proposal.get("action"),
        "action_hash": proposal.get("action_hash"),
        "links": links_for(settings, paths, proposal),
    }
    # The messages quote only what the body does not already quote.
    v["evidence_shown"] = [e for e in v["evidence"] if not (e["quote"] and e["quote"] in body)]
    return v


def proposal_message(settings: Settings, paths: Paths, proposal: dict[str, Any]) -> dict[str, str]:
    """Subject, plain text and HTML of the mail for one proposal."""
    v = view(settings, paths, proposal)
    return {
        "subject": f"[backchannel {v['id']}] {v['title']}",
        "text": render("proposal.txt.j2", p=v),
        "html": render("proposal.html.j2", p=v),
    }


def digest_message(settings: Settings, paths: Paths, proposals: list[dict[str, Any]]) -> dict[str, str]:
    """Subject, plain text and HTML of one mail carrying several proposals."""
    views = [view(settings, paths, p) for p in proposals]
    n = len(views)
    subject = f"[backchannel] {n} proposal{'s' if n != 1 else ''}: " + "; ".join(v["title"] for v in views[:3])
    return {
        "subject": subject[:200],
        "text": render("digest.txt.j2", proposals=views),
        "html": render("digest.html.j2", proposals=views),
    }


def chat_text(settings: Settings, paths: Paths, proposal: dict[str, Any]) -> dict[str, Any]:
    """The view plus a short markdown-ish body for chat channels."""
    v = view(settings, paths, proposal)
    v["markdown"] = render("proposal.md.j2", p=v)
    return v
