"""Budgeted support centrality of KINA Appendix B for one discipline, as named steps; it produces scores only.

Steps (notation of the appendix): psi(q) and A~_d(q) per item -> A^_d = Cal_A(A~, psi, Sigma_d) with BootLQ_dA ->
bank B_d = {BootLQ >= alpha_ref} -> B-bar_d = Dedup(B_d) -> mu_d from omega_h -> N_k(q) by exact search over e(q) ->
G(q) = N_k(q) + A_d -> phi on every pair {q, u} with u in G(q) -> T^sym, U^sym from g_T, g_U ->
S_d = [T^sym - lambda_dup U^sym]_+ -> C^_d(q) with the anchor tail surrogate, BootLQ_dC by refitting g_T, g_U ->
shortlist K_d by its three conditions -> U^sym of the shortlist's near pairs (the duplicate bound's input).
The selection stage turns these scores into S^sp and the chosen set (selection/policy.py).

Bootstrap replicates refit Cal_A (for A) and g_T, g_U (for C) on resampled labels; the bank, mu and N_k are those
of the point fit. D_d(q), which the appendix leaves open, is the candidate's `difficulty` (share of reference models
answering it wrong, KINA 4.1); a candidate without one passes that condition.

Every float here that decides something (bank, dedup, neighbours, shortlist, the duplicate bound) is computed so the
BLAS kernel, vector width and thread count cannot change it (issue 30; embed/exact.py): embeddings enter as integer
rows (exact similarities), calibrated scores are rounded to a 1e-9 grid, neighbours tie by row index.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import numpy.typing as npt
import polars as pl
import scipy.sparse as sp

from benchmark_platform.anchors import AnchorSet
from benchmark_platform.centrality.calibration import Calibrator, boot_lower_quantile, stratified_resample
from benchmark_platform.centrality.config import CentralityParams
from benchmark_platform.centrality.features import PairFeaturizer, TextSpace
from benchmark_platform.centrality.models import Candidate, Signature
from benchmark_platform.centrality.signature import Complete, fallback_signatures, llm_signatures, uncertainty_set
from benchmark_platform.embed import fixed_matvec, integer_rows, similarities, top_k

FloatArray = npt.NDArray[np.float64]
IntArray = npt.NDArray[np.int64]
BoolArray = npt.NDArray[np.bool_]

Embed = Callable[[list[str]], npt.NDArray[Any]]
"""Texts in, unit-length float32 rows out (e.g. benchmark_platform.embed.StaticEmbedder().encode)."""


@dataclass(frozen=True)
class CentralityResult:
    """Per-item scores and pair scores of one discipline (or why it goes to manual review).

    `items` has one row per candidate and anchor item (BootLQ of A and C, bank membership, mu, the shortlist flag);
    `pairs` one row per scored pair {q, u} (T^sym, U^sym, S_d, whether it is a support pair). The selection stage
    builds its problem from these frames.
    """

    discipline: str
    anchors_version: str
    manual_review: str | None
    fallback_used: bool
    items: pl.DataFrame
    pairs: pl.DataFrame
    counts: dict[str, int] = field(default_factory=dict)


def _manual(anchors: AnchorSet, reason: str, counts: dict[str, int]) -> CentralityResult:
    return CentralityResult(anchors.discipline, anchors.version, reason, False, pl.DataFrame(), pl.DataFrame(), counts)


def missing_inputs(candidates: Sequence[Candidate], anchors: AnchorSet) -> str | None:
    """Why the discipline cannot be scored at all (None: it can)."""
    if not anchors.anchor_items:
        return "no anchor items: A_d is empty"
    if not anchors.item_labels:
        return "no item labels: Cal_A cannot be fitted"
    if not anchors.pair_labels:
        return "no pair labels: g_T and g_U cannot be fitted"
    if not candidates:
        return "no candidates in the raw pool"
    return None


@dataclass(frozen=True)
class ItemTable:
    """One table of rows: candidates [0, n_cand), then anchor items [n_cand, n_pool), then labelled items not
    among them (used for calibration only; stratum -1)."""

    ids: list[str]
    texts: list[str]
    srcs: list[str]
    metas: list[dict[str, str]]
    strata: IntArray
    strata_names: list[str]
    row_of: dict[str, int]
    n_cand: int
    n_pool: int

    @property
    def anchor_rows(self) -> IntArray:
        return np.arange(self.n_cand, self.n_pool)


def item_table(candidates: Sequence[Candidate], anchors: AnchorSet) -> ItemTable:
    """The rows of the discipline; a candidate that is an anchor, repeats, or maps to no stratum is an error."""
    stratum_of = anchors.stratum_map()
    strata_names = [s.name for s in anchors.strata]
    stratum_index = {name: i for i, name in enumerate(strata_names)}
    anchor_ids = {a.id for a in anchors.anchor_items}
    row_of: dict[str, int] = {}
    ids: list[str] = []
    texts: list[str] = []
    srcs: list[str] = []
    metas: list[dict[str, str]] = []
    strata: list[int] = []

    def add(item_id: str, text: str, src: str, meta: dict[str, str], stratum: int) -> None:
        row_of[item_id] = len(ids)
        ids.append(item_id)
        texts.append(text)
        srcs.append(src)
        metas.append(meta)
        strata.append(stratum)

    for c in candidates:
        if c.id in anchor_ids:
            raise ValueError(
                f"candidate {c.id!r} is also an anchor item of {anchors.discipline!r}; anchors are never candidates"
            )
        if c.id in row_of:
            raise ValueError(f"candidate {c.id!r} appears twice")
        key = c.stratum_key if c.stratum_key in stratum_of else "*"
        if key not in stratum_of:
            raise ValueError(
                f"candidate {c.id!r}: stratum key {c.stratum_key!r} is mapped by no stratum of "
                f"{anchors.discipline!r} (strata files)"
            )
        add(c.id, c.text, c.src, c.metadata, stratum_index[stratum_of[key]])
    n_cand = len(ids)
    for a in anchors.anchor_items:
        add(a.id, a.text, a.src, {}, stratum_index[a.stratum])
    n_pool = len(ids)
    for item in anchors.item_labels:
        if item.id not in row_of:
            add(item.id, item.text, item.src, {}, -1)
    return ItemTable(ids, texts, srcs, metas, np.array(strata), strata_names, row_of, n_cand, n_pool)


def alignment_features(
    table: ItemTable,
    anchors: AnchorSet,
    space: TextSpace,
    tfidf: sp.csr_matrix,
    raw: FloatArray,
    grid: FloatArray,
) -> FloatArray:
    """Columns of Cal_A: A~_d, the best TF-IDF match per prototype component, the nearest anchor in e(q) (`grid`:
    the embeddings as integer_rows, so the similarities are exact)."""
    columns = [raw]
    for entries in anchors.prototype.components().values():
        columns.append(
            (tfidf @ space.tfidf(entries).T).max(axis=1).toarray().ravel() if entries else np.zeros(len(table.ids))
        )
    anchor_rows = table.anchor_rows
    to_anchor = similarities(grid, grid[anchor_rows])
    to_anchor[anchor_rows, np.arange(len(anchor_rows))] = -1.0  # an anchor's similarity to itself says nothing
    columns.append(to_anchor.max(axis=1))
    return np.column_stack(columns)


def calibrated_alignment(
    x_align: FloatArray,
    label_rows: IntArray,
    y_a: IntArray,
    n_pool: int,
    params: CentralityParams,
    rng: np.random.Generator,
) -> tuple[FloatArray, FloatArray]:
    """A^_d = Cal_A(A~, psi, Sigma_d) on the pool and its bootstrap lower quantile BootLQ_dA (draws from `rng`)."""
    a_hat = Calibrator(params.calibrator).fit(x_align[label_rows], y_a).predict(x_align[:n_pool])
    a_boot = np.empty((params.bootstrap, n_pool))
    for b in range(params.bootstrap):
        pick = stratified_resample(y_a, rng)
        a_boot[b] = Calibrator(params.calibrator).fit(x_align[label_rows[pick]], y_a[pick]).predict(x_align[:n_pool])
    return a_hat, boot_lower_quantile(a_boot, params.delta_A)


class PairModels:
    """g_T and g_U fitted on both directions of the labelled pairs."""

    def __init__(self, phi_qu: FloatArray, phi_uq: FloatArray, y_t: IntArray, y_u: IntArray) -> None:
        x = np.vstack([phi_qu, phi_uq])
        self.g_t = Calibrator().fit(x, np.concatenate([y_t, y_t]))
        self.g_u = Calibrator().fit(x, np.concatenate([y_u, y_u]))

    def scores(
        self, phi_ab: FloatArray, phi_ba: FloatArray, lambda_dup: float
    ) -> tuple[FloatArray, FloatArray, FloatArray]:
        """T^sym, U^sym and S_d = [T^sym - lambda_dup U^sym]_+ of pairs given by their features both ways."""
        t_sym = (self.g_t.predict(phi_ab) + self.g_t.predict(phi_ba)) / 2
        u_sym = (self.g_u.predict(phi_ab) + self.g_u.predict(phi_ba)) / 2
        return t_sym, u_sym, np.maximum(t_sym - lambda_dup * u_sym, 0.0)


def nearest(base: FloatArray, queries: FloatArray, k: int) -> IntArray:
    """Indices into `base` of each query's k+1 nearest by inner product (-1 where fewer exist); both as integer_rows.

    Exact search (no approximate index: an IVF's k-means is trained with BLAS and its cells move with the kernel),
    equal similarities in row order, so the neighbours are the same on every machine.
    """
    return top_k(base, queries, k + 1)


def _pair_key(a: IntArray, b: IntArray, n: int) -> IntArray:
    return np.minimum(a, b).astype(np.int64) * n + np.maximum(a, b)


def _neighbour_pairs(rows: IntArray, found: IntArray, among: IntArray) -> tuple[IntArray, IntArray]:
    """(q, u) row pairs from a nearest() result: `rows` queried, `among` the base rows; misses and self-pairs dropped."""
    q = np.repeat(rows, found.shape[1])
    u = np.where(found >= 0, among[np.clip(found, 0, None)], -1).ravel()
    keep = (u >= 0) & (u != q)
    return q[keep], u[keep]


def deduplicated_bank(
    bank: IntArray,
    a_lq: FloatArray,
    table: ItemTable,
    grid: FloatArray,
    featurize: PairFeaturizer,
    models: PairModels,
    params: CentralityParams,
    tau_dup: float,
) -> IntArray:
    """Dedup(B_d): keep in order (anchors, then higher BootLQ, then id) unless a kept neighbour duplicates it."""
    found = nearest(grid[bank], grid[bank], params.k_neighbours)
    qi, ui = _neighbour_pairs(bank, found, bank)
    _, u_sym_bank, _ = models.scores(*featurize.both_ways(qi, ui), params.lambda_dup)
    duplicates: dict[int, list[int]] = {}
    for q, u in zip(qi[u_sym_bank > tau_dup].tolist(), ui[u_sym_bank > tau_dup].tolist(), strict=True):
        duplicates.setdefault(q, []).append(u)
        duplicates.setdefault(u, []).append(q)
    is_anchor = np.zeros(len(table.ids), dtype=bool)
    is_anchor[table.anchor_rows] = True
    order = sorted(bank.tolist(), key=lambda r: (not is_anchor[r], -a_lq[r], table.ids[r]))
    kept: set[int] = set()
    for r in order:
        if not any(d in kept for d in duplicates.get(r, ())):
            kept.add(r)
    return np.array(sorted(kept))


def bank_weights(table: ItemTable, bank_dedup: IntArray, omega: FloatArray) -> FloatArray:
    """mu_d(q) = omega_h(q) / |B-bar_{d,h(q)}|, omega renormalised over strata present in the bank; 0 off the bank."""
    per_stratum = np.bincount(table.strata[bank_dedup], minlength=len(table.strata_names))
    omega = np.where(per_stratum > 0, omega, 0.0)
    omega = omega / omega.sum()
    mu = np.zeros(len(table.ids))
    mu[bank_dedup] = omega[table.strata[bank_dedup]] / per_stratum[table.strata[bank_dedup]]
    return mu


@dataclass(frozen=True)
class SupportPairs:
    """N_k(q) over B-bar_d minus q for every candidate, G(q) = N_k(q) + A_d, and every pair {q, u} with u in G(q).

    `keys` are the unique pairs (rows `pa` < `pb`); `nb_idx` and `an_idx` index them from the neighbour pairs
    (nb_q, nb_u) and from the candidate x anchor grid."""

    nb_q: IntArray
    nb_u: IntArray
    keys: IntArray
    pa: IntArray
    pb: IntArray
    nb_idx: IntArray
    an_idx: IntArray


def support_pairs(table: ItemTable, grid: FloatArray, bank_dedup: IntArray, params: CentralityParams) -> SupportPairs:
    n_cand, anchor_rows, n_rows = table.n_cand, table.anchor_rows, len(table.ids)
    cand = np.arange(n_cand)
    found = nearest(grid[bank_dedup], grid[cand], params.k_neighbours)
    nb_q, nb_u = _neighbour_pairs(cand, found, bank_dedup)
    rank = np.concatenate([[0], np.cumsum(np.bincount(nb_q, minlength=n_cand))[:-1]])
    within = np.arange(len(nb_q)) - rank[nb_q]
    nb_q, nb_u = nb_q[within < params.k_neighbours], nb_u[within < params.k_neighbours]
    an_q = np.repeat(cand, len(anchor_rows))
    an_u = np.tile(anchor_rows, n_cand)
    keys = np.unique(_pair_key(np.concatenate([nb_q, an_q]), np.concatenate([nb_u, an_u]), n_rows))
    return SupportPairs(
        nb_q=nb_q,
        nb_u=nb_u,
        keys=keys,
        pa=keys // n_rows,
        pb=keys % n_rows,
        nb_idx=np.searchsorted(keys, _pair_key(nb_q, nb_u, n_rows)),
        an_idx=np.searchsorted(keys, _pair_key(an_q, an_u, n_rows)).reshape(n_cand, len(anchor_rows)),
    )


def centrality(pairs: SupportPairs, mu: FloatArray, pi: FloatArray, s: FloatArray, n_cand: int) -> FloatArray:
    """C^_d(q) = sum_{N_k(q)} mu S + (1 - m_q) sum_a pi_a S(q, a), with m_q = sum_{N_k(q)} mu.

    bincount adds in pair order and fixed_matvec anchor by anchor: no BLAS, so C^ decides the shortlist the same way
    on every machine."""
    m_q = np.bincount(pairs.nb_q, weights=mu[pairs.nb_u], minlength=n_cand)
    return np.bincount(pairs.nb_q, weights=mu[pairs.nb_u] * s[pairs.nb_idx], minlength=n_cand) + (1 - m_q) * (
        fixed_matvec(s[pairs.an_idx], pi)
    )


def centrality_lower_quantile(
    pairs: SupportPairs,
    phi_ab: FloatArray,
    phi_ba: FloatArray,
    labelled: tuple[FloatArray, FloatArray, IntArray, IntArray],
    mu: FloatArray,
    pi: FloatArray,
    n_cand: int,
    params: CentralityParams,
    rng: np.random.Generator,
) -> FloatArray:
    """BootLQ_dC: C^_d refitted with g_T, g_U on pair labels resampled within their (y_T, y_U) cells."""
    phi_l_qu, phi_l_uq, y_t, y_u = labelled
    c_boot = np.empty((params.bootstrap, n_cand))
    cells = y_t * 2 + y_u
    for b in range(params.bootstrap):
        pick = stratified_resample(cells, rng)
        boot_models = PairModels(phi_l_qu[pick], phi_l_uq[pick], y_t[pick], y_u[pick])
        c_boot[b] = centrality(pairs, mu, pi, boot_models.scores(phi_ab, phi_ba, params.lambda_dup)[2], n_cand)
    return boot_lower_quantile(c_boot, params.delta_C)


def shortlist(
    candidates: Sequence[Candidate], a_lq: FloatArray, c_lq: FloatArray, params: CentralityParams
) -> IntArray:
    """K_d: the candidate rows with BootLQ(A) >= alpha_A, BootLQ(C) >= alpha_C and D_d(q) in I_d."""
    low, high = params.difficulty_interval
    difficulty = np.array([np.nan if c.difficulty is None else c.difficulty for c in candidates])
    difficulty_ok = np.isnan(difficulty) | ((difficulty >= low) & (difficulty <= high))
    return np.flatnonzero((a_lq[: len(candidates)] >= params.alpha_A) & (c_lq >= params.alpha_C) & difficulty_ok)


@dataclass(frozen=True)
class ScoredPairs:
    """Pairs {a, b} by row with T^sym, U^sym, S_d, and whether each is a support pair (else a duplicate check)."""

    a: IntArray
    b: IntArray
    t_sym: FloatArray
    u_sym: FloatArray
    s: FloatArray
    in_support: BoolArray

    def __len__(self) -> int:
        return len(self.a)


def duplicate_checks(
    short: IntArray,
    grid: FloatArray,
    scored: IntArray,
    n_rows: int,
    featurize: PairFeaturizer,
    models: PairModels,
    params: CentralityParams,
) -> ScoredPairs | None:
    """Duplicate scores of the shortlist, on demand on its nearest neighbours with the same cheap features; pairs
    already in `scored` (pair keys) are not scored twice. None when the shortlist has fewer than two members."""
    if len(short) <= 1:
        return None
    found = nearest(grid[short], grid[short], params.k_neighbours)
    dq, du = _neighbour_pairs(short, found, short)
    dkeys = np.setdiff1d(np.unique(_pair_key(dq, du, n_rows)), scored)
    da, db = dkeys // n_rows, dkeys % n_rows
    dt, du_sym, ds = models.scores(*featurize.both_ways(da, db), params.lambda_dup)
    return ScoredPairs(da, db, dt, du_sym, ds, np.zeros(len(da), bool))


def score_discipline(
    candidates: Sequence[Candidate],
    anchors: AnchorSet,
    params: CentralityParams,
    embed: Embed,
    complete: Complete | None = None,
    *,
    tau_dup: float,
) -> CentralityResult:
    """Support centrality for one discipline's candidates: the steps above, in the appendix's order. `tau_dup` is the
    selection's duplicate bound (selection.tau_dup), which the reference bank's Dedup(B_d) applies too."""
    counts = {"candidates": len(candidates), "anchors": len(anchors.anchor_items)}
    reason = missing_inputs(candidates, anchors)
    if reason is not None:
        return _manual(anchors, reason, counts)

    table = item_table(candidates, anchors)
    ids, n_cand, n_pool = table.ids, table.n_cand, table.n_pool
    prototype_texts = [t for entries in anchors.prototype.components().values() for t in entries]
    space = TextSpace(table.texts + prototype_texts)
    tfidf = space.tfidf(table.texts)
    signatures: list[Signature]
    if complete is None:
        signatures = fallback_signatures(table.texts, table.metas, anchors, space, x=tfidf)
    else:
        signatures = llm_signatures(ids, table.texts, anchors, complete, params)
    raw = np.array([s.raw_alignment for s in signatures])
    counts["llm_calls"] = 0 if complete is None else len(ids) + len(uncertainty_set(raw, params))
    embeddings = np.asarray(
        embed([f"{t} | {s.as_text()}" for t, s in zip(table.texts, signatures, strict=True)]), dtype=np.float32
    )
    grid = integer_rows(embeddings)  # e(q) on an integer grid: every similarity below is exact on any kernel
    featurize = PairFeaturizer(tfidf, space.words(tfidf), grid, table.srcs, signatures)

    x_align = alignment_features(table, anchors, space, tfidf, raw, grid)
    label_rows = np.array([table.row_of[i.id] for i in anchors.item_labels])
    y_a = np.array([i.y_A for i in anchors.item_labels])
    rng = np.random.default_rng(params.seed)  # one stream: A's bootstrap draws first, then C's
    a_hat, a_lq = calibrated_alignment(x_align, label_rows, y_a, n_pool, params, rng)

    pq = np.array([table.row_of[p.q] for p in anchors.pair_labels])
    pu = np.array([table.row_of[p.u] for p in anchors.pair_labels])
    labelled = (
        *featurize.both_ways(pq, pu),
        np.array([p.y_T for p in anchors.pair_labels]),
        np.array([p.y_U for p in anchors.pair_labels]),
    )
    models = PairModels(*labelled)

    bank = np.flatnonzero(a_lq >= params.alpha_ref)
    counts["bank"] = len(bank)
    if len(bank) == 0:
        return _manual(anchors, f"empty reference bank: no item has BootLQ(A) >= alpha_ref={params.alpha_ref}", counts)
    bank_dedup = deduplicated_bank(bank, a_lq, table, grid, featurize, models, params, tau_dup)
    counts["bank_dedup"] = len(bank_dedup)
    mu = bank_weights(table, bank_dedup, np.array([s.omega for s in anchors.strata]))

    support = support_pairs(table, grid, bank_dedup, params)
    phi_ab, phi_ba = featurize.both_ways(support.pa, support.pb)
    t_sym, u_sym, s_pair = models.scores(phi_ab, phi_ba, params.lambda_dup)
    pi = np.array([anchors.anchor_weights()[ids[r]] for r in table.anchor_rows])
    c_hat = centrality(support, mu, pi, s_pair, n_cand)
    c_lq = centrality_lower_quantile(support, phi_ab, phi_ba, labelled, mu, pi, n_cand, params, rng)

    short = shortlist(candidates, a_lq, c_lq, params)
    counts.update(pairs=len(support.keys), shortlisted=len(short))
    scored = [ScoredPairs(support.pa, support.pb, t_sym, u_sym, s_pair, np.ones(len(support.pa), bool))]
    checks = duplicate_checks(short, grid, support.keys, len(ids), featurize, models, params)
    if checks is not None:
        scored.append(checks)
    counts["duplicate_checks"] = int(sum(len(p) for p in scored[1:]))

    items = _item_frame(table, signatures, raw, a_hat, a_lq, bank, bank_dedup, mu, c_hat, c_lq, short)
    pairs = _pair_frame(ids, scored)
    counts["fallback_signatures"] = int(sum(s.fallback for s in signatures))
    fallback_used = any(s.fallback for s in signatures)
    if len(short) == 0:
        reason = "empty shortlist: no candidate meets BootLQ(A) >= alpha_A, BootLQ(C) >= alpha_C and D in I_d"
        return CentralityResult(anchors.discipline, anchors.version, reason, fallback_used, items, pairs, counts)
    counts["duplicate_pairs"] = duplicate_pair_count(scored, short, len(ids), tau_dup)
    return CentralityResult(anchors.discipline, anchors.version, None, fallback_used, items, pairs, counts)


def duplicate_pair_count(scored: Sequence[ScoredPairs], short: IntArray, n_rows: int, tau_dup: float) -> int:
    """Scored pairs of two shortlisted items with U^sym > tau_dup: the duplicate bound's pairs."""
    in_short = np.zeros(n_rows, dtype=bool)
    in_short[short] = True
    return int(sum(((p.u_sym > tau_dup) & in_short[p.a] & in_short[p.b]).sum() for p in scored))


def _item_frame(
    table: ItemTable,
    signatures: Sequence[Signature],
    raw: FloatArray,
    a_hat: FloatArray,
    a_lq: FloatArray,
    bank: IntArray,
    bank_dedup: IntArray,
    mu: FloatArray,
    c_hat: FloatArray,
    c_lq: FloatArray,
    short: IntArray,
) -> pl.DataFrame:
    n_cand, n_pool = table.n_cand, table.n_pool

    def flags(rows: IntArray) -> BoolArray:
        out = np.zeros(n_pool, dtype=bool)
        out[rows] = True
        return out

    def candidates_only(values: FloatArray) -> FloatArray:
        out = np.full(n_pool, np.nan)
        out[:n_cand] = values
        return out

    return pl.DataFrame(
        {
            "item_id": table.ids[:n_pool],
            "role": ["candidate"] * n_cand + ["anchor"] * (n_pool - n_cand),
            "stratum": [table.strata_names[h] for h in table.strata[:n_pool]],
            "method_family": [s.method_family for s in signatures[:n_pool]],
            "core_principle": [s.core_principle for s in signatures[:n_pool]],
            "answer_type": [s.answer_type for s in signatures[:n_pool]],
            "constraints": [list(s.constraints) for s in signatures[:n_pool]],
            "raw_alignment": raw[:n_pool],
            "fallback": [s.fallback for s in signatures[:n_pool]],
            "rechecked": [s.rechecked for s in signatures[:n_pool]],
            "a_hat": a_hat,
            "a_lq": a_lq,
            "in_bank": flags(bank),
            "in_bank_dedup": flags(bank_dedup),
            "mu": mu[:n_pool],
            "c_hat": candidates_only(c_hat),
            "c_lq": candidates_only(c_lq),
            "shortlisted": flags(short),
        },
        schema_overrides={"constraints": pl.List(pl.String)},
    ).with_columns(pl.col("c_hat", "c_lq").fill_nan(None))


def _pair_frame(ids: Sequence[str], scored: Sequence[ScoredPairs]) -> pl.DataFrame:
    return pl.DataFrame(
        {
            "q_id": [ids[a] for a in np.concatenate([p.a for p in scored]).tolist()],
            "u_id": [ids[b] for b in np.concatenate([p.b for p in scored]).tolist()],
            "t_sym": np.concatenate([p.t_sym for p in scored]),
            "u_sym": np.concatenate([p.u_sym for p in scored]),
            "s": np.concatenate([p.s for p in scored]),
            "in_support": np.concatenate([p.in_support for p in scored]),
        }
    )
