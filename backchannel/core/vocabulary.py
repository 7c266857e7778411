"""The shared vocabulary, defined once: offline rules, model extraction, the JSONL
importer, the graph API and index, skills, the web pages and the CLI's choices all
read it from here. The database's CHECK constraints (memory/migrations/0001_core.sql)
hold the same lists; a test keeps them in step.
"""

from __future__ import annotations

ENTITY_KINDS = ("person", "organisation", "role")

# Index order matters: the graph index stores a modality as its position here.
MODALITIES = ("stated", "reported", "commitment", "opinion")
STANCES = ("asserted", "negated", "hypothetical", "rumour", "reported", "joke", "exercise", "ended", "knows_of")

# What the words do to a claim (extraction/meaning classifies it; memory/trust.py weighs it).
# Stored: asserted, rumour, reported, ended (a tie that ended or soured); knowing *of*
# someone is not knowing them (no knows fact); negated, hypothetical, joke and exercise
# claims are never stored as facts.
STANCES = ("asserted", "negated", "hypothetical", "rumour", "reported", "joke", "exercise", "ended", "knows_of")
# Claims that are not facts about the world: never stored.
NOT_FACT_STANCES = frozenset({"negated", "hypothetical", "joke", "exercise"})

# The predicate vocabulary, each with the line the extraction prompt shows the model.
PREDICATES = {
    "works_at": "person -> organisation; qualifier: title if known ('CIO'). Current unless valid_to.",
    "left": "person -> organisation; valid_to: when they left, if said.",
    "has_title": "person -> literal title ('project manager'), no organisation named.",
    "worked_with": "person -> person; qualifier: organisation where; valid_from/valid_to: when.",
    "knows": "person -> person (includes 'X introduced me to Y': me knows Y, X knows Y).",
    "introduced": "person -> person: subject made an introduction of/to object.",
    "committed_to": "person -> literal promise ('send you the pricing'); valid_to: due date. modality commitment.",
    "mentioned_with": "person -> organisation/person co-mention of lower confidence.",
}

# Predicates whose object is a literal string, not an entity.
LITERAL_PREDICATES = frozenset({"has_title", "committed_to"})

# What a candidate (and so a proposal) may be about.
CANDIDATE_KINDS = ("introduction", "brief", "reconnect", "commitment", "other")

# What the graph API serves to generated code (graph/api.py), and what `[edges.program] may_reach` names.
API_METHODS = (
    "me",
    "now",
    "resolve",
    "entity",
    "assertions_about",
    "links",
    "between",
    "network",
    "paths",
    "mentions_of",
    "upcoming_events",
    "recent_signals",
    "evidence",
    "subjects_of",
    "addressed_as",
    "conversations",
    "kept",
)
