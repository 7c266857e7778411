"""Memory: search across entities and quotes, the list of entities, and one person or
organisation: what was said, by whom and when, current versus superseded facts on a
timeline, aliases, merges (merge another in, split one out)."""

from __future__ import annotations

from typing import Any

from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from backchannel.core.vocabulary import ENTITY_KINDS
from backchannel.ops.fact_groups import group_facts
from backchannel.web import graph_view
from backchannel.web.app import call, flash, form, handler, render, see_other
from backchannel.web.bridge import OpFailed

MAX_LISTED = 500
FACTS_PER_PAGE = 50  # items of each list on an entity page; the rest on ?page=2...


@handler
async def memory(request: Request) -> Response:
    q = (request.query_params.get("q") or "").strip()
    kind = request.query_params.get("kind") or None
    if q:
        found = await call(request, "search", query=q, limit=100)
        return render(
            request, "memory.html", title=f"Search: {q}", q=q, kind=kind, kinds=ENTITY_KINDS, found=found, entities=None
        )
    rows = await call(request, "entities", kind=kind)
    pairs = await call(request, "entity_duplicates", limit=50)
    return render(
        request,
        "memory.html",
        title="Memory",
        q="",
        kind=kind,
        kinds=ENTITY_KINDS,
        found=None,
        entities=rows[:MAX_LISTED],
        total=len(rows),
        duplicates=pairs,
    )


def _timeline_key(a: dict) -> str:
    return str(a.get("valid_from") or a.get("said_at") or "")


@handler
async def entity(request: Request) -> Response:
    eid = request.path_params["eid"]
    data = await call(request, "export_entity", ref=str(eid), reader="web")
    me = data["entity"]["id"]
    if me != eid:  # merged into another: its page is the live entity's
        return see_other(f"/memory/{me}")
    about = [a for a in data["assertions"] if me in (a["subject_id"], a["object_id"])]
    about.sort(key=_timeline_key)
    said = [a for a in data["assertions"] if a["speaker_id"] == me and me not in (a["subject_id"], a["object_id"])]
    # One fact said in several meetings is one item with its sources; then a page of each list.
    lists = {
        "current": group_facts([a for a in about if not a["superseded_at"]]),
        "superseded": group_facts([a for a in about if a["superseded_at"]]),
        "timeline": group_facts(about),
        "said": group_facts(said),
    }
    pages = max(1, *(-(-len(v) // FACTS_PER_PAGE) for v in lists.values()))
    try:
        page = min(max(1, int(request.query_params.get("page") or 1)), pages)
    except ValueError:
        raise OpFailed("page must be a whole number") from None
    start = (page - 1) * FACTS_PER_PAGE
    shown: dict[str, Any] = {k: v[start : start + FACTS_PER_PAGE] for k, v in lists.items()}
    return render(
        request,
        "entity.html",
        title=data["entity"]["name"],
        e=data["entity"],
        data=data,
        **shown,
        counts={k: len(v) for k, v in lists.items()},
        page=page,
        pages=pages,
        per_page=FACTS_PER_PAGE,
        merges=[m for m in data["merges"] if m["kept_id"] == me and not m["undone_at"]],
        **await graph_view.entity_drawings(request, me),
    )


@handler
async def merge(request: Request) -> Response:
    eid = request.path_params["eid"]
    f = await form(request)
    other = (f.get("other") or "").strip()
    if not other:
        raise OpFailed("name the entity to merge into this one (a name, an alias or an id)")
    result = await call(request, "entities_merge", keep=str(eid), merge=other, reason=f.get("reason") or None)
    flash(
        request,
        "ok",
        f"Merged {result.get('merged_name') or other} into this entity ({result['merge_id']}); "
        "split it out again below if that was wrong.",
    )
    return see_other(f"/memory/{result['kept_id']}")


@handler
async def split(request: Request) -> Response:
    f = await form(request)
    result = await call(request, "entities_split", ref=(f.get("merge") or "").strip())
    flash(
        request,
        "ok",
        f"Split {result['merge_id']}: {result.get('restored_name') or result['restored_id']} is its own entity again.",
    )
    return see_other(f"/memory/{result['restored_id']}")


@handler
async def ask_page(request: Request) -> Response:
    return render(request, "ask.html", title="Ask", question="", result=None)


@handler
async def ask(request: Request) -> Response:
    """The CLI's `ask`: a program walks the graph in the sandbox; ranked answers with
    evidence. It records a run (so it is a POST), and proposes and sends nothing."""
    f = await form(request)
    question = (f.get("question") or "").strip()
    result = await call(request, "ask", question=question)
    return render(request, "ask.html", title=f"Ask: {question}", question=question, result=result)


def routes() -> list[Route]:
    return [
        Route("/ask", ask_page, methods=["GET"]),
        Route("/ask", ask, methods=["POST"]),
        Route("/memory", memory, methods=["GET"]),
        Route("/memory/split", split, methods=["POST"]),
        Route("/memory/{eid:int}", entity, methods=["GET"]),
        Route("/memory/{eid:int}/merge", merge, methods=["POST"]),
    ]
