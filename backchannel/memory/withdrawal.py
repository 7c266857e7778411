"""A withdrawal that arrives without the owner typing `consent withdraw`: a name listed in
`[consent] withdrawn`, an attendee a calendar invite marks as opted out. What memory
already holds about them is erased as `forget` erases, once, and recorded.

The order makes it durable and idempotent: the erasure first (deleting what is already
gone deletes nothing), the rewrite-pending marker (so the next opener of the file, or the
daemon after the run, rewrites it and no deleted byte stays readable), and only then the
hashes in `consent_withdrawals`. A crash before the hashes commit repeats an erasure that
finds nothing; once they are there the name is never erased again.
"""

from __future__ import annotations

from collections.abc import Iterable

from backchannel.memory import consent, erasure
from backchannel.memory import entities as entity_repo
from backchannel.memory.store import Store
from backchannel.memory.text import norm_name


def pending(store: Store, names: Iterable[str]) -> list[str]:
    """The names not yet recorded as withdrawn (their hash is not in the store)."""
    wanted = [n.strip() for n in names if len(norm_name(n or "")) >= 2]
    if not wanted:
        return []
    known = {
        r[0]
        for r in store.con.execute(
            "SELECT name_hash FROM consent_withdrawals WHERE list_contains(?, name_hash)",
            [[consent.name_hash(n) for n in wanted]],
        ).fetchall()
    }
    return [n for n in dict.fromkeys(wanted) if consent.name_hash(n) not in known]


def withdraw_and_erase(store: Store, names: list[str], *, via: str) -> dict[str, int] | None:
    """One person's names and addresses: erase what memory holds about them, then record
    the withdrawal. None when every name was already recorded (nothing done) or a name is
    the owner's (an owner never withdraws from their own memory: nothing is done either)."""
    todo = pending(store, names)
    if not todo:
        return None
    people = {e.id: e for n in todo for e in entity_repo.find(store, n)}
    if any(e.is_owner for e in people.values()):
        return None
    all_names = list(todo)
    first_names: list[str] = []
    for eid in people:
        all_names += erasure.names_of(store, eid)
    first_names = [n.split()[0] for n in all_names if " " in n.strip() and "@" not in n]
    erasure.mark_rewrite_pending(store.path)
    counts: dict[str, int] = {"entities": 0}
    for eid in people:
        report = erasure.forget(store, eid)
        counts["entities"] += len(report.entity_ids)
        for k, v in report.counts.items():
            counts[k] = counts.get(k, 0) + v
    for k, v in erasure.redact_names(store, all_names).items():
        counts[f"text_{k}"] = counts.get(f"text_{k}", 0) + v
    with store.transaction():
        person = consent.withdraw(store, all_names, first_names=first_names, via=via)
        store.append_event(
            "consent.withdrawn",
            {"person": person, "names_hashed": len(set(all_names)), "via": via, "entities_erased": counts["entities"]},
        )
    return counts


def apply_configured(store: Store, configured: Iterable[str]) -> int:
    """Erase, once, the people named in `[consent] withdrawn` (each entry one person: a name
    or an address) who are not recorded yet. Returns how many were newly recorded; the
    caller rewrites the file when it is more than 0 (or leaves it to the next opener)."""
    done = 0
    for name in configured:
        if withdraw_and_erase(store, [name], via="config") is not None:
            done += 1
    return done


__all__ = ["apply_configured", "pending", "withdraw_and_erase"]
