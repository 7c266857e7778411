"""Email ingest throughput, offline: generated messages (replies with quotes, signatures,
introductions, promises, some HTML-only) from a Maildir and from an mbox.

Two passes in one run, each on a fresh store: first the baseline (one message per
transaction), then the product path (`backchannel ingest`'s operation: messages written
several to a transaction, extraction/mail/batch.py), so both see the same machine load.
Prints JSON per pass: messages/min for each (wall clock; and per CPU-minute, which other
processes on a shared machine do not skew), p50/p95 ms per message, assertions, the re-ingest
(skip) cost; then the speed-up, whether both passes stored the same rows, peak RSS.
Target: >= 2,000 messages/min offline on 2 cores.
Usage: python bench/mail.py [--messages 2000] [--no-baseline]
"""

from __future__ import annotations

import argparse
import json
import mailbox
import os
import random
import resource
import shutil
import statistics
import tempfile
import time
from pathlib import Path

FIRST = [
    "Marc",
    "Sophie",
    "Julie",
    "Tom",
    "Priya",
    "Nadia",
    "Paul",
    "Karl",
    "Laura",
    "Omar",
    "Ines",
    "Lucas",
    "Chloe",
    "Hugo",
    "Emma",
    "Noah",
    "Lea",
    "Arthur",
    "Jade",
    "Louis",
]
LAST = [
    "Dupont",
    "Martin",
    "Bernard",
    "Becker",
    "Shah",
    "Haddad",
    "Girard",
    "Weber",
    "Chen",
    "Khan",
    "Costa",
    "Laurent",
    "Simon",
    "Michel",
    "Lefebvre",
    "Garcia",
    "Roux",
    "Fournier",
    "Blanc",
    "Meyer",
]
ORGS = ["Acme", "Globex", "Initech", "Hooli", "Umbrella Corp", "Cyberdyne", "Soylent", "Vandelay Industries"]
TITLES = ["Chief Information Officer", "CTO", "Head of Procurement", "VP of Engineering", "Account Manager"]
FILLER = [
    "Thanks for the call earlier, it was really useful.",
    "The rollout went fine in the first region but the second one is behind schedule.",
    "Honestly the budget is tight this quarter, so let's prioritise the essentials.",
    "We had some issues with the vendor, mostly around support response times.",
    "Let me know if the timeline still works for your team.",
]


def _person(rng: random.Random) -> tuple[str, str]:
    first, last = rng.choice(FIRST), rng.choice(LAST)
    return f"{first} {last}", f"{first.lower()}.{last.lower()}@{rng.choice(ORGS).split()[0].lower()}.example"


def message(rng: random.Random, i: int) -> bytes:
    (sender, s_addr), (other, o_addr), (third, _t) = _person(rng), _person(rng), _person(rng)
    body = [f"Hi {other.split()[0]},", ""]
    body.append(" ".join(rng.choice(FILLER) for _ in range(rng.randint(1, 3))))
    kind = rng.random()
    if kind < 0.2:
        body.append(f"{other.split()[0]}, meet {third}. {third.split()[0]} leads data at {rng.choice(ORGS)}.")
    elif kind < 0.35:
        body.append(f"Looping in {third}, who worked with me at {rng.choice(ORGS)}.")
    if rng.random() < 0.4:
        body.append("I'll send you the pricing by Friday.")
    body += [
        "",
        "Best,",
        sender.split()[0],
        "",
        "--",
        sender,
        f"{rng.choice(TITLES)} | {rng.choice(ORGS)}",
        "+33 1 23 45 67 89",
    ]
    if rng.random() < 0.7:
        body += [
            "",
            f"On Mon, 2 Nov 2026 at 09:{i % 60:02d}, {other} <{o_addr}> wrote:",
            *[
                f"> {line}"
                for line in (
                    rng.choice(FILLER),
                    "",
                    f"Can you send the numbers for item {i}?",
                    "",
                    "Thanks,",
                    other.split()[0],
                )
            ],
        ]
    text = "\n".join(body) + "\n"
    html = rng.random() < 0.1
    if html:
        text = "<html><body>" + "".join(f"<p>{line}</p>" for line in text.split("\n") if line) + "</body></html>"
    return (
        f"From: {sender} <{s_addr}>\nTo: {other} <{o_addr}>\nSubject: Update {i}\n"
        f"Date: Mon, 02 Nov 2026 10:{i % 60:02d}:00 +0100\nMessage-ID: <bench-{i}@bench.example>\n"
        f"MIME-Version: 1.0\nContent-Type: text/{'html' if html else 'plain'}; charset=utf-8\n\n{text}"
    ).encode()


def _pass(work: Path, name: str, msgs: list[bytes], half: int, *, baseline: bool) -> dict:
    """One fresh home and store; the Maildir through the `ingest` operation (what
    `backchannel ingest ~/Maildir` calls, in the CLI's chunks of paths), then the mbox.
    `baseline`: the one-message-per-transaction path (each file through `ingest_file`, as
    the operation did before batches; mbox batches of one)."""
    os.environ["BACKCHANNEL_HOME"] = str(work / name)
    from backchannel.cli.ingest_cmd import chunks
    from backchannel.config import load_settings, resolve_paths
    from backchannel.extraction.ingest import expand_paths, ingest_file
    from backchannel.extraction.mail import batch as mail_batch
    from backchannel.memory import Store
    from backchannel.ops import OpEnv
    from backchannel.ops.memory_ops import ingest as ingest_op

    paths = resolve_paths().ensure()
    paths.config_file.write_text('[owner]\nname = "Alex Moreau"\nemail = "alex@example.com"\n')
    settings = load_settings(paths)
    store = Store.open(paths.db_file)
    env = OpEnv(store=store, settings=settings, paths=paths)
    files = [str(f) for f in expand_paths([work / "Maildir"])]
    parts = chunks(files, offline=True)  # the paths of each `ingest` call, as `backchannel ingest` sends them
    batch_size = mail_batch.BATCH_MESSAGES
    if baseline:
        mail_batch.BATCH_MESSAGES = 1

    def chunk_of(part: list[str]) -> list:
        if baseline:
            return [ingest_file(store, settings, f).to_dict() for f in part]
        return ingest_op(env, part)["results"]

    try:
        per, assertions = [], 0
        c_all, t_all = time.process_time(), time.perf_counter()
        for part in parts:
            t0 = time.perf_counter()
            results = chunk_of(part)
            per += [(time.perf_counter() - t0) / len(part)] * len(part)  # a chunk's time over its messages
            for r in results:
                if r["status"] == "failed":
                    raise SystemExit(f"{r['path']}: {r['error']}")
                assertions += r.get("assertions", 0)
        md_total, md_cpu = time.perf_counter() - t_all, time.process_time() - c_all
        t0, c0 = time.perf_counter(), time.process_time()
        mbox_out = ingest_file(store, settings, work / "archive.mbox")
        mbox_total, mbox_cpu = time.perf_counter() - t0, time.process_time() - c0
        t0 = time.perf_counter()
        skipped = sum(r["status"] == "skipped" for part in parts for r in chunk_of(part))
        reingest = time.perf_counter() - t0
        stored = store.scalar("SELECT count(*) FROM mail_messages")
        sources = store.scalar("SELECT count(*) FROM sources")
        entities = store.scalar("SELECT count(*) FROM entities")
    finally:
        mail_batch.BATCH_MESSAGES = batch_size
        store.close()
    per.sort()
    return {
        "messages_per_transaction": 1 if baseline else min(batch_size, max(map(len, parts))),
        "maildir_messages_per_min": round(len(files) / md_total * 60),
        "maildir_messages_per_cpu_min": round(len(files) / md_cpu * 60),
        "mbox_messages_per_min": round(half / mbox_total * 60),
        "mbox_messages_per_cpu_min": round(half / mbox_cpu * 60),
        "p50_ms": round(statistics.median(per) * 1000, 2),
        "p95_ms": round(per[int(0.95 * (len(per) - 1))] * 1000, 2),
        "assertions": assertions + mbox_out.assertions,
        "stored_messages": stored,
        "sources": sources,
        "entities": entities,
        "reingest_skipped": skipped,
        "reingest_ms_per_message": round(reingest / len(files) * 1000, 2),
        "load_average_1m": round(os.getloadavg()[0], 2),
    }


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--messages", type=int, default=2000)
    ap.add_argument("--seed", type=int, default=14)
    ap.add_argument(
        "--no-baseline", action="store_true", help="skip the one-message-per-transaction pass run first for comparison"
    )
    args = ap.parse_args()
    work = Path(tempfile.mkdtemp(prefix="bench-mail-"))
    rng = random.Random(args.seed)
    msgs = [message(rng, i) for i in range(args.messages)]
    md = mailbox.Maildir(str(work / "Maildir"), create=True)
    for m in msgs:
        md.add(mailbox.MaildirMessage(m))
    md.close()
    half = args.messages // 2
    mb = mailbox.mbox(str(work / "archive.mbox"), create=True)
    for i in range(half):  # an mbox of other messages (new Message-IDs), read as one file
        mb.add(mailbox.mboxMessage(msgs[i].replace(b"@bench.example>", b"@mbox.example>")))
    mb.flush()
    mb.close()
    try:
        passes = {} if args.no_baseline else {"baseline": _pass(work, "home-baseline", msgs, half, baseline=True)}
        passes["batched"] = _pass(work, "home-batched", msgs, half, baseline=False)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    out = {"bench": "mail-ingest-offline", "messages": args.messages, "target_messages_per_min": 2000, **passes}
    if "baseline" in passes:
        b, n = passes["baseline"], passes["batched"]
        out["speedup"] = {
            k: round(n[k] / b[k], 2)
            for k in (
                "maildir_messages_per_min",
                "maildir_messages_per_cpu_min",
                "mbox_messages_per_min",
                "mbox_messages_per_cpu_min",
            )
        }
        # Same messages, same memory: batching changes when rows commit, never which rows.
        out["same_rows"] = all(b[k] == n[k] for k in ("assertions", "stored_messages", "sources", "entities"))
    out["peak_rss_mb"] = round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1)
    out["cpus"] = os.cpu_count()
    print(json.dumps(out, indent=2))


if __name__ == "__main__":
    main()
