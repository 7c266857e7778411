"""The embedder's numpy engine gives sentence-transformers' vectors: the reference
(torch) runs in this same process on the same ~50 varied sentences, long ones cut at
max_seq_length included, and every row must agree within 1e-5."""

from __future__ import annotations

import os

import numpy as np
import pytest

from backchannel import embedding
from backchannel.embedding_numpy import MiniLM

# One worker loads sentence-transformers (and torch) once for `reference`.
pytestmark = pytest.mark.xdist_group("embedding_numpy")

LONG = (
    "We went through the quarterly roadmap item by item, and Marc kept coming back to the pricing "
    "question, because the enterprise tier had been promised to three customers before the board "
    "approved it, which meant that sales, legal and engineering all had different dates in mind. "
)

SENTENCES = [
    "Marc and I worked together at Acme for years.",
    "I'll send the pricing over by Friday.",
    "Sophie reports to the CIO of Globex.",
    "Can everyone see my screen?",
    "So, uh, Priya and me, we did a stint at Initech back in the day.",
    "",
    " ",
    "ok",
    "Yes.",
    "Hmm.",
    "?!",
    "The deadline is 2024-03-15 at 17:00 CET.",
    "Call me at +44 20 7946 0958 or mail jane.doe@example.com.",
    "https://example.org/path?q=1&x=2",
    "Revenue grew 12.5% year over year, to $4.2M.",
    "ALL CAPS SENTENCE ABOUT THE MERGER",
    "tHe CaSe Is MiXeD hErE",
    "Zoë met François at the café in Saint-Étienne.",
    "Müller, Øresund, Łódź, Ångström and São Paulo.",
    "Nous avons travaillé ensemble chez Capgemini pendant trois ans.",
    "Elle m'a présenté à son ancien collègue de Danone.",
    "Wir treffen uns nächste Woche in München.",
    "¿Dónde está la reunión de mañana?",
    "田中さんは来週の会議に出席します。",
    "私は山田さんとソニーで一緒に働いていました。",
    "東京オフィスの佐藤部長に紹介してもらえますか？",
    "Привет, как дела с контрактом?",
    "مرحبا بكم في الاجتماع",
    "这个项目下个月完成。",
    "Emoji test 🎉🚀 done 👍",
    "tab\tseparated\tvalues",
    "line one\nline two\nline three",
    "a" * 300,
    "antidisestablishmentarianism pneumonoultramicroscopicsilicovolcanoconiosis",
    "The the the the the the the the the the.",
    "I, uh, I mean, you know, like, it's, it's kind of, um, whatever.",
    "Action item: Bob to draft the brief for the Initech intro.",
    "Let's circle back on Q3 OKRs after the offsite.",
    "She left Globex in 2019 and joined Hooli as VP of Engineering.",
    "Remind me to follow up with Dana about the NDA.",
    "Do you know anyone at Stripe who works on payments risk?",
    "The meeting was rescheduled twice; nobody told the client.",
    "#hashtag @mention $ticker %percent ^caret &amp; *star*",
    "0123456789 9876543210",
    LONG,
    LONG * 3,  # > 256 tokens: truncated
    LONG * 8,
    " ".join(["token"] * 400),
    "Zoë " * 200,
    "日本語の長い文です。" * 60,
]


@pytest.fixture(scope="module")
def reference() -> np.ndarray:
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    from sentence_transformers import SentenceTransformer

    st = SentenceTransformer(embedding.model_path(), device="cpu")
    vecs = st.encode(
        SENTENCES, batch_size=16, convert_to_numpy=True, normalize_embeddings=True, show_progress_bar=False
    )
    return np.asarray(vecs, dtype=np.float32)


def test_numpy_engine_matches_sentence_transformers(reference: np.ndarray) -> None:
    model = MiniLM(embedding.model_path())
    assert model.max_seq_length == 256  # read from the package's sentence_bert_config.json
    assert max(len(e.ids) for e in model.tok.encode_batch(SENTENCES)) == 256  # some were cut
    ours = model.encode(SENTENCES, batch_size=16)
    assert ours.shape == (len(SENTENCES), embedding.DIM) and ours.dtype == np.float32
    diff = np.abs(ours - reference).max(axis=1)
    worst = int(diff.argmax())
    assert diff.max() < 1e-5, f"row {worst} ({SENTENCES[worst][:40]!r}) differs by {diff.max():.2e}"
    np.testing.assert_allclose(np.linalg.norm(ours, axis=1), 1.0, atol=1e-6)


def test_order_and_batching_do_not_change_a_row(reference: np.ndarray) -> None:
    # Sorted by length inside encode and restored: each row is its sentence's, whatever
    # its neighbours, the batch size, or the split of a batch of long ones.
    model = MiniLM(embedding.model_path())
    perm = np.random.default_rng(7).permutation(len(SENTENCES))
    shuffled = model.encode([SENTENCES[i] for i in perm], batch_size=5)
    assert np.abs(shuffled - reference[perm]).max() < 1e-5
    one = model.encode([SENTENCES[3]], batch_size=1)
    assert np.abs(one[0] - reference[3]).max() < 1e-5


def test_tokens_split_over_passes_and_slabs_give_the_same_rows(
    monkeypatch: pytest.MonkeyPatch, reference: np.ndarray
) -> None:
    # The packed tokens cut into many passes (a 256-token sentence alone in one) and the
    # feed-forward block into slabs of 7 rows: the same vectors as one pass.
    from backchannel import embedding_numpy

    monkeypatch.setattr(embedding_numpy, "TOKENS_PER_PASS", 300)
    monkeypatch.setattr(embedding_numpy, "FFN_ROWS", 7)
    ours = MiniLM(embedding.model_path()).encode(SENTENCES, batch_size=3)
    assert np.abs(ours - reference).max() < 1e-5


def test_embed_computes_a_repeated_text_once_with_the_same_row(reference: np.ndarray) -> None:
    embedding.set_mode("in_process")
    texts = [SENTENCES[0], SENTENCES[1], SENTENCES[0], SENTENCES[2], SENTENCES[1]]
    vecs = embedding.embed(texts)
    assert vecs.shape == (5, embedding.DIM)
    assert np.array_equal(vecs[0], vecs[2]) and np.array_equal(vecs[1], vecs[4])
    assert np.abs(vecs - reference[[0, 1, 0, 2, 1]]).max() < 1e-5


def test_embed_runs_the_numpy_engine_by_default(monkeypatch: pytest.MonkeyPatch, reference: np.ndarray) -> None:
    monkeypatch.delenv("BACKCHANNEL_EMBEDDER_ENGINE", raising=False)
    embedding.set_mode("in_process")
    assert embedding.engine() == "numpy"
    vecs = embedding.embed(SENTENCES[:10])
    assert isinstance(embedding.load_model(), MiniLM)
    assert vecs.dtype == np.float32 and np.abs(vecs - reference[:10]).max() < 1e-5


def test_an_unknown_engine_is_a_clear_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("BACKCHANNEL_EMBEDDER_ENGINE", "tensorflow")
    with pytest.raises(ValueError, match="BACKCHANNEL_EMBEDDER_ENGINE must be one of numpy, torch"):
        embedding.engine()


SPAN_TEXTS = [
    "So I heard he's headed to Cigna next month, honestly.",
    "Priya Raman, she's the CFO at Ocado now.",
    "Zoë's team at Société Générale moved to Nestlé's old floor.",
]
# character spans in each text (one-word names, a two-word name, a word cut into pieces, one past the end)
SPAN_CUTS = [[(26, 31)], [(0, 5), (6, 11), (30, 35)], [(0, 3), (14, 31), (41, 47), (200, 210)]]


def test_span_vectors_are_sentence_transformers_token_states_averaged() -> None:
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    from sentence_transformers import SentenceTransformer

    st = SentenceTransformer(embedding.model_path(), device="cpu")
    ours = MiniLM(embedding.model_path()).span_vectors(SPAN_TEXTS, SPAN_CUTS)
    assert ours.shape == (8, embedding.DIM) and ours.dtype == np.float32
    assert not ours[-1].any()  # a span no token lies in is a zero row
    row = 0
    for text, cuts in zip(SPAN_TEXTS, SPAN_CUTS):
        states = st.encode([text], output_value="token_embeddings", convert_to_numpy=False)[0].numpy()
        offsets = st.tokenizer(text, return_offsets_mapping=True)["offset_mapping"]
        for a, b in cuts:
            inside = [k for k, (s0, s1) in enumerate(offsets) if s1 > s0 and s0 >= a and s1 <= b]
            if inside:
                assert np.abs(ours[row] - states[inside].mean(0)).max() < 1e-4, (text, a, b)
            row += 1
    # a span's vector depends on its sentence, not on the other sentences of the call
    alone = MiniLM(embedding.model_path()).span_vectors(SPAN_TEXTS[1:2], SPAN_CUTS[1:2])
    assert np.abs(alone - ours[1:4]).max() < 1e-5
    # the same word reads differently in another sentence: context is what the typer reads
    other = MiniLM(embedding.model_path()).span_vectors(["Cigna."], [[(0, 5)]])
    assert np.abs(other[0] - ours[0]).max() > 0.1
