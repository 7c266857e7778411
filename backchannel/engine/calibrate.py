"""Judge weights calibrated from feedback.

Every judged proposal left its features in the event log (`judge.scored`); the
owner's latest verdict on it is its label (accept or approve: 1, dismiss: 0).
Per kind, a logistic regression is fitted by Newton's method with the
documented priors (judge_kinds.PRIORS) as a Gaussian prior: the loss is the
log-loss plus PRIOR_STRENGTH/2 * |theta - prior|^2, so a handful of verdicts
nudges the weights and many verdicts move them, and with no verdicts the priors
stand. Fitting costs well under a millisecond for hundreds of proposals; it runs
after each verdict (`refit`).
"""

from __future__ import annotations

import json
from typing import Any

from backchannel.engine.judge_kinds import PRIORS
from backchannel.memory.store import Store, utcnow

PRIOR_STRENGTH = 1.0
MIN_EXAMPLES = 3  # fewer verdicts than this on a kind: the priors stand
ITERATIONS = 25


def examples(store: Store, kind: str) -> tuple[list[dict[str, float]], list[int]]:
    """(features, labels) of the proposals of `kind` with an accept/approve/dismiss verdict."""
    rows = store.query(
        """WITH verdict AS (
               SELECT f.proposal_id, arg_max(f.verdict, f.id) AS verdict FROM feedback f
               WHERE f.verdict IN ('accept', 'approve', 'dismiss') GROUP BY 1)
           SELECT v.verdict, e.data FROM verdict v JOIN proposals p ON p.id = v.proposal_id
           JOIN events e ON e.run_id = p.run_id AND e.kind = 'judge.scored'
                AND json_extract_string(e.data, '$.dedupe_key') = p.dedupe_key
           WHERE p.kind = ?""",
        [kind],
    )
    feats, labels = [], []
    for r in rows:
        data = json.loads(r["data"]) if isinstance(r["data"], str) else r["data"]
        feats.append({k: float(v) for k, v in (data.get("signals") or {}).items()})
        labels.append(0 if r["verdict"] == "dismiss" else 1)
    return feats, labels


def fit(
    kind: str, feats: list[dict[str, float]], labels: list[int], strength: float = PRIOR_STRENGTH
) -> tuple[float, dict[str, float]]:
    """MAP logistic regression around the kind's priors: (bias, {feature: weight})."""
    import numpy as np

    bias0, w0 = PRIORS[kind]
    names = sorted(w0)
    theta0 = np.array([bias0] + [w0[n] for n in names])
    x = np.array([[1.0] + [f.get(n, 0.0) for n in names] for f in feats]).reshape(len(feats), len(names) + 1)
    y = np.asarray(labels, dtype=float)
    theta = theta0.copy()
    eye = np.eye(len(theta))
    for _ in range(ITERATIONS):
        p = 1 / (1 + np.exp(-(x @ theta)))
        grad = x.T @ (p - y) + strength * (theta - theta0)
        hess = (x.T * (p * (1 - p))) @ x + strength * eye
        step = np.linalg.solve(hess, grad)
        theta -= step
        if float(np.abs(step).max()) < 1e-8:
            break
    return float(theta[0]), {n: float(theta[i + 1]) for i, n in enumerate(names)}


def refit(store: Store, kind: str) -> dict[str, Any] | None:
    """Refit `kind` from its verdicts and store the weights; None when too few verdicts
    (any stored weights are then removed: the priors stand)."""
    if kind not in PRIORS:
        return None
    feats, labels = examples(store, kind)
    if len(labels) < MIN_EXAMPLES:
        store.con.execute("DELETE FROM judge_weights WHERE kind = ?", [kind])
        return None
    bias, w = fit(kind, feats, labels)
    store.con.execute(
        """INSERT INTO judge_weights (kind, bias, weights, examples, accepted, fitted_at) VALUES (?, ?, ?, ?, ?, ?)
           ON CONFLICT (kind) DO UPDATE SET bias = excluded.bias, weights = excluded.weights,
               examples = excluded.examples, accepted = excluded.accepted, fitted_at = excluded.fitted_at""",
        [kind, bias, json.dumps(w), len(labels), sum(labels), utcnow()],
    )
    return {"kind": kind, "bias": bias, "weights": w, "examples": len(labels), "accepted": sum(labels)}


def weights(store: Store, kind: str) -> tuple[float, dict[str, float]] | None:
    """The fitted (bias, weights) of `kind`, or None: the priors apply."""
    if kind not in PRIORS:
        return None
    row = store.con.execute("SELECT bias, weights FROM judge_weights WHERE kind = ?", [kind]).fetchone()
    return (float(row[0]), json.loads(row[1])) if row else None


def table(store: Store) -> dict[str, Any]:
    """Every kind's weights in use, fitted or prior, for `stats`."""
    out = {}
    for kind, (bias, w) in PRIORS.items():
        row = store.query(
            "SELECT bias, weights, examples, accepted, fitted_at FROM judge_weights WHERE kind = ?", [kind]
        )
        if row:
            r = row[0]
            out[kind] = {
                "source": "fitted",
                "bias": round(r["bias"], 3),
                "weights": {k: round(v, 3) for k, v in json.loads(r["weights"]).items()},
                "examples": r["examples"],
                "accepted": r["accepted"],
                "fitted_at": r["fitted_at"],
            }
        else:
            out[kind] = {"source": "prior", "bias": bias, "weights": dict(w)}
    return out
