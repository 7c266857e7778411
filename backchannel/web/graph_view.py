"""Drawings on the memory pages: a person's or organisation's ties as a graph (drawn in
the browser by the vendored Cytoscape.js, static/graph.js), the path behind an
introduction, and a timeline of what was said about someone (an SVG laid out here, so it
needs no script at all).

The graph's data travels inside the page as a JSON data block (never executed, so the
Content-Security-Policy allows it), and every tie is also listed as text: with
JavaScript off the page loses the drawing, not the ties."""

from __future__ import annotations

import json
from datetime import date, timedelta
from typing import Any

from markupsafe import Markup
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from backchannel.web.app import call, handler, render, see_other

GRAPH_NODES = 40  # on an entity's page; the full page of ties draws up to FULL_GRAPH_NODES
FULL_GRAPH_NODES = 200
TIMELINE_ROWS = 80  # the most recent ones; the lists above hold them all

PREDICATE_WORDS = {
    "works_at": "works at",
    "left": "left",
    "worked_with": "worked with",
    "knows": "knows",
    "knows_of": "knows of",  # the name, not the person: no tie
    "introduced": "introduced",
    "mentioned_with": "mentioned with",
    "met": "met",
}


def data_block(value: Any) -> Markup:
    """JSON safe inside <script type="application/json">: no '<', '>' or '&' survive, so
    nothing in a quote can close the element."""
    text = json.dumps(value, ensure_ascii=False)
    return Markup(text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026"))


def _tie_rows(graph: dict[str, Any]) -> list[dict[str, Any]]:
    names = {n["id"]: n["name"] for n in graph["nodes"]}
    rows = []
    for e in sorted(graph["edges"], key=lambda e: (-e["trust"], e["said_at"] or "")):
        rows.append(
            {
                **e,
                "source_name": names.get(e["source"]),
                "target_name": names.get(e["target"]),
                "words": PREDICATE_WORDS.get(e["predicate"], e["predicate"].replace("_", " "))
                + (" (ended)" if e.get("stance") == "ended" else ""),
            }
        )
    return rows


def ties_context(graph: dict[str, Any], more_url: str | None) -> dict[str, Any]:
    return {"graph": graph, "graph_json": data_block(graph), "tie_rows": _tie_rows(graph), "more_url": more_url}


async def entity_ties(request: Request, eid: int, max_nodes: int = GRAPH_NODES) -> dict[str, Any]:
    graph = await call(request, "entity_ties", ref=str(eid), hops=2, max_nodes=max_nodes)
    return ties_context(graph, f"/memory/{eid}/ties" if graph["more"] else None)


async def proposal_path(request: Request, p: dict[str, Any]) -> dict[str, Any] | None:
    """The path an introduction rests on; None for other kinds of proposal."""
    if p.get("kind") != "introduction":
        return None
    return ties_context(await call(request, "proposal_path", id=p["id"]), None)


# --- the timeline, an SVG laid out on the server -------------------------------------

CHART_X0, CHART_X1, LABEL_X = 330, 960, 8
ROW_H, TOP = 24, 44
LEAD_PX = 26  # how far an unknown start or end is drawn past the point it is known to
STATE_TEXT_PX = 150  # room for "due 2026-03-20 · overdue"


def _day(value: str | None) -> date | None:
    return date.fromisoformat(value[:10]) if value else None


def timeline_layout(tl: dict[str, Any], rows: int = TIMELINE_ROWS) -> dict[str, Any]:
    """Positions for every row of the timeline: {width, height, ticks, today_x, rows,
    hidden}. A row: the fact at the day it was said (a hollow dot when the meeting was dated
    by the file), its validity span as a bar (a dashed tail where an end is unknown), a
    promise's due date as a diamond coloured by its state."""
    items = tl["items"][-rows:]
    today = date.fromisoformat(tl["today"])
    days: list[date] = [today]
    for it in items:
        days += [
            d
            for d in (
                _day(it["said_at"]),
                _day(it["valid_from"]),
                _day(it["valid_to"]),
                _day((it["promise"] or {}).get("due")),
            )
            if d
        ]
    lo, hi = min(days), max(days)
    pad = max(timedelta(days=15), (hi - lo) * 0.04)
    lo, hi = lo - pad, hi + pad
    span = max(1, (hi - lo).days)

    def x(d: date) -> float:
        return round(CHART_X0 + (CHART_X1 - CHART_X0) * (d - lo).days / span, 1)

    out_rows = []
    for i, it in enumerate(items):
        y = TOP + i * ROW_H + ROW_H / 2
        said = _day(it["said_at"]) or today
        start, end = _day(it["valid_from"]), _day(it["valid_to"])
        ended = _day(it["superseded_at"])
        row: dict[str, Any] = {"item": it, "y": y, "said_x": x(said), "label_y": y + 4}
        if it["promise"]:
            due = _day(it["promise"]["due"])
            ends = [row["said_x"]] + ([x(due)] if due else [])
            right = max(ends) + 10
            # The state's words go right of the marks, or left of them where the chart ends.
            text_x, anchor = (right, "start") if right + STATE_TEXT_PX <= CHART_X1 + 30 else (min(ends) - 10, "end")
            row["promise"] = {
                "state": it["promise"]["state"],
                "due_x": x(due) if due else None,
                "due": it["promise"]["due"],
                "text_x": text_x,
                "anchor": anchor,
            }
        else:
            known_from = start or said
            known_to = end or max(said, known_from)
            row["bar"] = (x(min(known_from, known_to)), x(max(known_from, known_to)))
            row["start_unknown"] = start is None
            # An open end runs on to today (or to its correction), dashed: not known to have ended.
            row["end_unknown"] = end is None
            row["tail_to"] = x(ended or today) if end is None else None
        out_rows.append(row)
    years = range(lo.year + (1 if lo.month > 1 or lo.day > 1 else 0), hi.year + 1)
    ticks = [{"x": x(date(yr, 1, 1)), "label": str(yr)} for yr in years]
    if len(ticks) > 12:
        step = -(-len(ticks) // 12)
        ticks = ticks[::step]
    if len(ticks) < 2:  # a short span: months instead
        ticks = []
        d = date(lo.year, lo.month, 1)
        while d <= hi:
            if d >= lo:
                ticks.append({"x": x(d), "label": d.strftime("%b %Y")})
            d = date(d.year + d.month // 12, d.month % 12 + 1, 1)
        ticks = ticks[:: max(1, -(-len(ticks) // 8))]
    return {
        "width": CHART_X1 + 30,
        "height": TOP + len(items) * ROW_H + 34,
        "ticks": ticks,
        "today_x": x(today),
        "today": tl["today"],
        "rows": out_rows,
        "x0": CHART_X0,
        "x1": CHART_X1,
        "label_x": LABEL_X,
        "lead": LEAD_PX,
        "hidden": len(tl["items"]) - len(items),
        "axis_y": TOP - 10,
    }


async def entity_drawings(request: Request, eid: int) -> dict[str, Any]:
    """The context an entity's page draws from, in one operation: `ties` (the graph and
    its list) and `tl` (the timeline's layout, None when nothing was said)."""
    both = await call(request, "entity_drawings", ref=str(eid), max_nodes=GRAPH_NODES)
    graph, tl = both["ties"], both["timeline"]
    return {
        "ties": ties_context(graph, f"/memory/{eid}/ties" if graph["more"] else None),
        "tl": timeline_layout(tl) if tl["items"] else None,
    }


# --- the page of all ties -------------------------------------------------------------


@handler
async def all_ties(request: Request) -> Response:
    eid = request.path_params["eid"]
    ties = await entity_ties(request, eid, FULL_GRAPH_NODES)
    ties["more_url"] = None  # this is the page "and N more" leads to
    center = next((n for n in ties["graph"]["nodes"] if n["center"]), None)
    if center is None:
        return see_other("/memory")
    if center["id"] != eid:
        return see_other(f"/memory/{center['id']}/ties")
    return render(request, "ties.html", title=f"Ties of {center['name']}", e=center, ties=ties)


def routes() -> list[Route]:
    return [Route("/memory/{eid:int}/ties", all_ties, methods=["GET"])]
