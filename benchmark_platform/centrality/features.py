"""Cheap text features: a TF-IDF space with keyphrases, and the pair features phi(q, u) of KINA Appendix B.

phi(q, u) = Phi(psi(q), psi(u), sim_e(e(q), e(u)), sim_x(x_q, x_u), 1{src(q) = src(u)}) with columns
PAIR_FEATURES. It is directed through `containment` (share of u's words found in q), so phi(q, u) != phi(u, q)
in general and the symmetrisation of T and U is not a no-op.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import scipy.sparse as sp

from benchmark_platform.centrality.models import Signature
from benchmark_platform.embed import rowwise_similarities

PAIR_FEATURES = (
    "sim_e",
    "sim_x",
    "containment",
    "same_src",
    "same_method",
    "same_answer_type",
    "principle_jaccard",
    "constraint_jaccard",
)
_CHUNK = 50_000
_CONTAINMENT = PAIR_FEATURES.index("containment")


class TextSpace:
    """TF-IDF (words and word pairs, English stop words removed) fitted on one discipline's texts."""

    def __init__(self, corpus: Sequence[str]) -> None:
        from sklearn.feature_extraction.text import TfidfVectorizer  # here: sklearn costs ~1.4 s to import

        self._vectorizer = TfidfVectorizer(
            strip_accents="unicode", stop_words="english", ngram_range=(1, 2), sublinear_tf=True, dtype=np.float32
        )
        self._vectorizer.fit(list(corpus))
        names = self._vectorizer.get_feature_names_out()
        self._names = names
        self._unigram = np.flatnonzero(np.char.find(names.astype(str), " ") < 0)

    def tfidf(self, texts: Sequence[str]) -> sp.csr_matrix:
        """L2-normalised rows, so row dot products are cosines in [0, 1]."""
        rows: sp.csr_matrix = self._vectorizer.transform(list(texts)).tocsr()
        return rows

    def words(self, x: sp.csr_matrix) -> sp.csr_matrix:
        """The binary word (unigram) sets of TF-IDF rows."""
        w = x[:, self._unigram].tocsr()
        w.data[:] = 1.0
        return w

    def keyphrases(self, x: sp.csr_matrix, n: int) -> list[list[str]]:
        """The n highest-weighted terms of each row (ties broken by term order), as a deterministic keyphrase list."""
        out = []
        for i in range(x.shape[0]):
            row = x.getrow(i)
            order = np.lexsort((row.indices, -row.data))[:n]
            out.append([str(self._names[row.indices[j]]) for j in order])
        return out


def _token_sets(strings: Sequence[str]) -> sp.csr_matrix:
    """Binary word sets of short strings (signature fields); an empty vocabulary gives an all-zero matrix."""
    from sklearn.feature_extraction.text import CountVectorizer  # here: sklearn costs ~1.4 s to import

    try:
        vectorizer = CountVectorizer(binary=True, token_pattern=r"(?u)\b\w+\b", dtype=np.float32)
        sets: sp.csr_matrix = vectorizer.fit_transform(strings).tocsr()
        return sets
    except ValueError:
        return sp.csr_matrix(np.zeros((len(strings), 1), dtype=np.float32))


def _rowwise_dot(a: sp.csr_matrix, b: sp.csr_matrix) -> np.ndarray:
    dots: np.ndarray = np.asarray(a.multiply(b).sum(axis=1)).ravel()
    return dots


def _jaccard(sets: sp.csr_matrix, sizes: np.ndarray, qi: np.ndarray, ui: np.ndarray) -> np.ndarray:
    inter = _rowwise_dot(sets[qi], sets[ui])
    union = sizes[qi] + sizes[ui] - inter
    ratio: np.ndarray = np.divide(inter, union, out=np.zeros_like(inter), where=union > 0)
    return ratio


class PairFeaturizer:
    """Computes phi for index pairs into one table of items (texts, sources, signatures, embeddings as
    embed.exact.integer_rows, so sim_e is exact on any machine; the sparse products sum in a fixed order)."""

    def __init__(
        self,
        tfidf: sp.csr_matrix,
        words: sp.csr_matrix,
        embeddings: np.ndarray,
        srcs: Sequence[str],
        signatures: Sequence[Signature],
    ) -> None:
        self.tfidf = tfidf
        self.words = words
        self.word_counts = np.asarray(words.sum(axis=1)).ravel()
        self.embeddings = embeddings
        codes = {s: i for i, s in enumerate(sorted(set(srcs)))}
        self.src = np.array([codes[s] if s else -1 for s in srcs])
        self.method = _codes([s.method_family for s in signatures])
        self.answer_type = _codes([s.answer_type for s in signatures])
        self.principles = _token_sets([s.core_principle for s in signatures])
        self.principle_sizes = np.asarray(self.principles.sum(axis=1)).ravel()
        self.constraints = _token_sets([" ".join(s.constraints) for s in signatures])
        self.constraint_sizes = np.asarray(self.constraints.sum(axis=1)).ravel()

    def __call__(self, qi: np.ndarray, ui: np.ndarray) -> np.ndarray:
        """phi(q, u) for each (qi[j], ui[j]); float64 array of shape (len(qi), len(PAIR_FEATURES))."""
        return self.both_ways(qi, ui, backward=False)[0]

    def both_ways(self, qi: np.ndarray, ui: np.ndarray, *, backward: bool = True) -> tuple[np.ndarray, np.ndarray]:
        """(phi(q, u), phi(u, q)) at little more than the cost of one. Every column but containment is symmetric to
        the bit (the products commute, the sparse sums run over the same shared columns in the same order), so
        phi(u, q) is phi(q, u) with the shared words divided by q's word count instead of u's. Without `backward`
        the second array is empty."""
        out = np.empty((len(qi), len(PAIR_FEATURES)), dtype=np.float64)
        back = np.empty((len(qi) if backward else 0, len(PAIR_FEATURES)), dtype=np.float64)
        for start in range(0, len(qi), _CHUNK):
            q, u = qi[start : start + _CHUNK], ui[start : start + _CHUNK]
            shared = _rowwise_dot(self.words[q], self.words[u])
            rows = slice(start, start + len(q))
            out[rows] = np.column_stack(
                [
                    rowwise_similarities(self.embeddings[q], self.embeddings[u]),
                    _rowwise_dot(self.tfidf[q], self.tfidf[u]),
                    _containment(shared, self.word_counts[u]),
                    (self.src[q] == self.src[u]) & (self.src[q] >= 0),
                    self.method[q] == self.method[u],
                    self.answer_type[q] == self.answer_type[u],
                    _jaccard(self.principles, self.principle_sizes, q, u),
                    _jaccard(self.constraints, self.constraint_sizes, q, u),
                ]
            )
            if backward:
                back[rows] = out[rows]
                back[rows, _CONTAINMENT] = _containment(shared, self.word_counts[q])
        return out, back


def _containment(shared: np.ndarray, words: np.ndarray) -> np.ndarray:
    """Share of the second item's words found in the first (0 when it has none)."""
    ratio: np.ndarray = np.divide(shared, words, out=np.zeros_like(shared), where=words > 0)
    return ratio


def _codes(values: Sequence[str]) -> np.ndarray:
    index = {v: i for i, v in enumerate(sorted(set(values)))}
    return np.array([index[v] for v in values])
