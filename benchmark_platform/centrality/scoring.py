"""Budgeted support centrality of KINA Appendix B, end to end for one discipline, and the selection problem it sets.

Steps (notation of the appendix): psi(q) and A~_d(q) per item -> A^_d = Cal_A(A~, psi, Sigma_d) with BootLQ_dA ->
bank B_d = {BootLQ >= alpha_ref} -> B-bar_d = Dedup(B_d) -> mu_d from omega_h -> N_k(q) by faiss over e(q) ->
G(q) = N_k(q) + A_d -> phi on every pair {q, u} with u in G(q) -> T^sym, U^sym from g_T, g_U ->
S_d = [T^sym - lambda_dup U^sym]_+ -> C^_d(q) with the anchor tail surrogate, BootLQ_dC by refitting g_T, g_U ->
shortlist K_d by its three conditions -> S^sp and the duplicate pairs of the final selection.

Bootstrap replicates refit Cal_A (for A) and g_T, g_U (for C) on resampled labels; the bank, mu and N_k are those
of the point fit. D_d(q), which the appendix leaves open, is the candidate's `difficulty` (share of reference models
answering it wrong, KINA 4.1); a candidate without one passes that condition.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import faiss
import numpy as np
import polars as pl
import scipy.sparse as sp

from benchmark_platform.anchors import AnchorSet
from benchmark_platform.centrality.calibration import Calibrator, boot_lower_quantile, stratified_resample
from benchmark_platform.centrality.features import PairFeaturizer, TextSpace
from benchmark_platform.centrality.models import Candidate, Signature
from benchmark_platform.centrality.params import CentralityParams
from benchmark_platform.centrality.signature import Complete, fallback_signatures, llm_signatures, uncertainty_set
from benchmark_platform.selection.greedy import select_greedy
from benchmark_platform.selection.mip import select_mip
from benchmark_platform.selection.problem import InfeasibleSelectionError, SelectionProblem, SelectionResult

Embed = Callable[[list[str]], np.ndarray]
"""Texts in, unit-length float32 rows out (e.g. benchmark_platform.embed.StaticEmbedder().encode)."""


@dataclass(frozen=True)
class CentralityResult:
    """Per-item scores, pair scores and the selection problem of one discipline (or why it goes to manual review)."""

    discipline: str
    anchors_version: str
    manual_review: str | None
    fallback_used: bool
    items: pl.DataFrame
    pairs: pl.DataFrame
    problem: SelectionProblem | None
    counts: dict[str, int] = field(default_factory=dict)


def _manual(anchors: AnchorSet, reason: str, counts: dict[str, int]) -> CentralityResult:
    return CentralityResult(
        anchors.discipline, anchors.version, reason, False, pl.DataFrame(), pl.DataFrame(), None, counts
    )


class _PairModels:
    """g_T and g_U fitted on both directions of the labelled pairs."""

    def __init__(self, phi_qu: np.ndarray, phi_uq: np.ndarray, y_t: np.ndarray, y_u: np.ndarray) -> None:
        x = np.vstack([phi_qu, phi_uq])
        self.g_t = Calibrator().fit(x, np.concatenate([y_t, y_t]))
        self.g_u = Calibrator().fit(x, np.concatenate([y_u, y_u]))

    def scores(
        self, phi_ab: np.ndarray, phi_ba: np.ndarray, lambda_dup: float
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        t_sym = (self.g_t.predict(phi_ab) + self.g_t.predict(phi_ba)) / 2
        u_sym = (self.g_u.predict(phi_ab) + self.g_u.predict(phi_ba)) / 2
        return t_sym, u_sym, np.maximum(t_sym - lambda_dup * u_sym, 0.0)


_EXACT_UP_TO = 4096  # bases larger than this are searched approximately (IVF), as ANN_k allows


def _knn(base: np.ndarray, queries: np.ndarray, k: int) -> np.ndarray:
    """Indices into `base` of each query's k+1 nearest by inner product (-1 where fewer exist).

    Exact up to 4,096 base rows; above, an inverted-file index (sqrt(n) k-means cells, 8 probed) whose
    training is seeded, so the same inputs give the same neighbours.
    """
    base = np.ascontiguousarray(base, dtype=np.float32)
    if len(base) <= _EXACT_UP_TO:
        index = faiss.IndexFlatIP(base.shape[1])
    else:
        cells = int(np.sqrt(len(base)))
        index = faiss.IndexIVFFlat(faiss.IndexFlatIP(base.shape[1]), base.shape[1], cells, faiss.METRIC_INNER_PRODUCT)
        index.cp.seed = 20261129
        index.train(base)
        index.nprobe = 8
    index.add(base)
    _, found = index.search(np.ascontiguousarray(queries, dtype=np.float32), min(k + 1, len(base)))
    return found


def _pair_key(a: np.ndarray, b: np.ndarray, n: int) -> np.ndarray:
    return np.minimum(a, b).astype(np.int64) * n + np.maximum(a, b)


def score_discipline(
    candidates: Sequence[Candidate],
    anchors: AnchorSet,
    params: CentralityParams,
    embed: Embed,
    complete: Complete | None = None,
) -> CentralityResult:
    """Support centrality and the selection problem for one discipline's candidates."""
    counts = {"candidates": len(candidates), "anchors": len(anchors.anchor_items)}
    if not anchors.anchor_items:
        return _manual(anchors, "no anchor items: A_d is empty", counts)
    if not anchors.item_labels:
        return _manual(anchors, "no item labels: Cal_A cannot be fitted", counts)
    if not anchors.pair_labels:
        return _manual(anchors, "no pair labels: g_T and g_U cannot be fitted", counts)
    if not candidates:
        return _manual(anchors, "no candidates in the raw pool", counts)

    # One table of rows: candidates, then anchor items, then labelled items not among them.
    stratum_of = anchors.stratum_map()
    strata_names = [s.name for s in anchors.strata]
    stratum_index = {name: i for i, name in enumerate(strata_names)}
    anchor_ids = {a.id for a in anchors.anchor_items}
    row_of: dict[str, int] = {}
    ids, texts, srcs, metas, strata = [], [], [], [], []
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
                f"candidate {c.id!r}: stratum key {c.stratum_key!r} is mapped by no stratum of {anchors.discipline!r} (strata files)"
            )
        row_of[c.id] = len(ids)
        ids.append(c.id), texts.append(c.text), srcs.append(c.src), metas.append(c.metadata)
        strata.append(stratum_index[stratum_of[key]])
    n_cand = len(ids)
    for a in anchors.anchor_items:
        row_of[a.id] = len(ids)
        (
            ids.append(a.id),
            texts.append(a.text),
            srcs.append(a.src),
            metas.append({}),
            strata.append(stratum_index[a.stratum]),
        )
    n_pool = len(ids)
    for item in anchors.item_labels:
        if item.id not in row_of:
            row_of[item.id] = len(ids)
            ids.append(item.id), texts.append(item.text), srcs.append(item.src), metas.append({}), strata.append(-1)
    strata_arr = np.array(strata)
    prototype_texts = [t for entries in anchors.prototype.components().values() for t in entries]
    space = TextSpace(texts + prototype_texts)

    tfidf = space.tfidf(texts)
    signatures: list[Signature]
    if complete is None:
        signatures = fallback_signatures(texts, metas, anchors, space, x=tfidf)
    else:
        signatures = llm_signatures(ids, texts, anchors, complete, params)
    fallback_used = any(s.fallback for s in signatures)
    raw = np.array([s.raw_alignment for s in signatures])
    counts["llm_calls"] = 0 if complete is None else len(ids) + len(uncertainty_set(raw, params))

    embeddings = np.asarray(
        embed([f"{t} | {s.as_text()}" for t, s in zip(texts, signatures, strict=True)]), dtype=np.float32
    )
    featurize = PairFeaturizer(tfidf, space.words(tfidf), embeddings, srcs, signatures)

    # Calibrated alignment A^_d = Cal_A(A~, psi, Sigma_d) and its bootstrap lower quantile.
    columns = [raw]
    for entries in anchors.prototype.components().values():
        columns.append(
            (tfidf @ space.tfidf(entries).T).max(axis=1).toarray().ravel() if entries else np.zeros(len(ids))
        )
    anchor_rows = np.arange(n_cand, n_pool)
    to_anchor = embeddings @ embeddings[anchor_rows].T
    to_anchor[anchor_rows, np.arange(len(anchor_rows))] = -1.0  # an anchor's similarity to itself says nothing
    columns.append(to_anchor.max(axis=1))
    x_align = np.column_stack(columns)
    label_rows = np.array([row_of[i.id] for i in anchors.item_labels])
    y_a = np.array([i.y_A for i in anchors.item_labels])
    rng = np.random.default_rng(params.seed)
    a_hat = Calibrator(params.calibrator).fit(x_align[label_rows], y_a).predict(x_align[:n_pool])
    a_boot = np.empty((params.bootstrap, n_pool))
    for b in range(params.bootstrap):
        pick = stratified_resample(y_a, rng)
        a_boot[b] = Calibrator(params.calibrator).fit(x_align[label_rows[pick]], y_a[pick]).predict(x_align[:n_pool])
    a_lq = boot_lower_quantile(a_boot, params.delta_A)

    # Pair calibrators g_T, g_U on the labelled pairs (both directions).
    pq = np.array([row_of[p.q] for p in anchors.pair_labels])
    pu = np.array([row_of[p.u] for p in anchors.pair_labels])
    phi_l_qu, phi_l_uq = featurize(pq, pu), featurize(pu, pq)
    y_t = np.array([p.y_T for p in anchors.pair_labels])
    y_u = np.array([p.y_U for p in anchors.pair_labels])
    models = _PairModels(phi_l_qu, phi_l_uq, y_t, y_u)

    # Reference bank B_d and Dedup: keep in order (anchors, then higher BootLQ) unless a kept neighbour duplicates it.
    bank = np.flatnonzero(a_lq >= params.alpha_ref)
    counts["bank"] = len(bank)
    if len(bank) == 0:
        return _manual(anchors, f"empty reference bank: no item has BootLQ(A) >= alpha_ref={params.alpha_ref}", counts)
    found = _knn(embeddings[bank], embeddings[bank], params.k_neighbours)
    qi = np.repeat(bank, found.shape[1])
    ui = np.where(found >= 0, bank[np.clip(found, 0, None)], -1).ravel()
    keep_pair = (ui >= 0) & (ui != qi)
    qi, ui = qi[keep_pair], ui[keep_pair]
    _, u_sym_bank, _ = models.scores(featurize(qi, ui), featurize(ui, qi), params.lambda_dup)
    duplicates: dict[int, list[int]] = {}
    for q, u in zip(qi[u_sym_bank > params.tau_dup].tolist(), ui[u_sym_bank > params.tau_dup].tolist(), strict=True):
        duplicates.setdefault(q, []).append(u)
        duplicates.setdefault(u, []).append(q)
    is_anchor = np.zeros(len(ids), dtype=bool)
    is_anchor[anchor_rows] = True
    order = sorted(bank.tolist(), key=lambda r: (not is_anchor[r], -a_lq[r], ids[r]))
    kept: set[int] = set()
    for r in order:
        if not any(d in kept for d in duplicates.get(r, ())):
            kept.add(r)
    bank_dedup = np.array(sorted(kept))
    counts["bank_dedup"] = len(bank_dedup)

    # mu_d(q) = omega_h(q) / |B-bar_{d,h(q)}|, omega renormalised over strata present in the bank.
    omega = np.array([s.omega for s in anchors.strata])
    per_stratum = np.bincount(strata_arr[bank_dedup], minlength=len(strata_names))
    omega = np.where(per_stratum > 0, omega, 0.0)
    omega = omega / omega.sum()
    mu = np.zeros(len(ids))
    mu[bank_dedup] = omega[strata_arr[bank_dedup]] / per_stratum[strata_arr[bank_dedup]]

    # N_k(q) over B-bar_d \ {q} for every candidate, G(q) = N_k(q) + A_d, and every pair {q, u} with u in G(q).
    cand = np.arange(n_cand)
    found = _knn(embeddings[bank_dedup], embeddings[cand], params.k_neighbours)
    nb_q = np.repeat(cand, found.shape[1])
    nb_u = np.where(found >= 0, bank_dedup[np.clip(found, 0, None)], -1).ravel()
    valid = (nb_u >= 0) & (nb_u != nb_q)
    nb_q, nb_u = nb_q[valid], nb_u[valid]
    rank = np.concatenate([[0], np.cumsum(np.bincount(nb_q, minlength=n_cand))[:-1]])
    within = np.arange(len(nb_q)) - rank[nb_q]
    nb_q, nb_u = nb_q[within < params.k_neighbours], nb_u[within < params.k_neighbours]
    an_q = np.repeat(cand, len(anchor_rows))
    an_u = np.tile(anchor_rows, n_cand)
    n_rows = len(ids)
    keys = np.unique(_pair_key(np.concatenate([nb_q, an_q]), np.concatenate([nb_u, an_u]), n_rows))
    pa, pb = keys // n_rows, keys % n_rows
    phi_ab, phi_ba = featurize(pa, pb), featurize(pb, pa)
    t_sym, u_sym, s_pair = models.scores(phi_ab, phi_ba, params.lambda_dup)
    nb_idx = np.searchsorted(keys, _pair_key(nb_q, nb_u, n_rows))
    an_idx = np.searchsorted(keys, _pair_key(an_q, an_u, n_rows)).reshape(n_cand, len(anchor_rows))
    pi = np.array([anchors.anchor_weights()[ids[r]] for r in anchor_rows])
    m_q = np.bincount(nb_q, weights=mu[nb_u], minlength=n_cand)

    def centrality(s: np.ndarray) -> np.ndarray:
        """C^_d(q) = sum_{N_k(q)} mu S + (1 - m_q) sum_a pi_a S(q, a)."""
        return np.bincount(nb_q, weights=mu[nb_u] * s[nb_idx], minlength=n_cand) + (1 - m_q) * (s[an_idx] @ pi)

    c_hat = centrality(s_pair)
    c_boot = np.empty((params.bootstrap, n_cand))
    cells = y_t * 2 + y_u
    for b in range(params.bootstrap):
        pick = stratified_resample(cells, rng)
        boot_models = _PairModels(phi_l_qu[pick], phi_l_uq[pick], y_t[pick], y_u[pick])
        c_boot[b] = centrality(boot_models.scores(phi_ab, phi_ba, params.lambda_dup)[2])
    c_lq = boot_lower_quantile(c_boot, params.delta_C)

    # Shortlist K_d: BootLQ(A) >= alpha_A, BootLQ(C) >= alpha_C, D_d(q) in I_d.
    low, high = params.difficulty_interval
    difficulty = np.array([np.nan if c.difficulty is None else c.difficulty for c in candidates])
    difficulty_ok = np.isnan(difficulty) | ((difficulty >= low) & (difficulty <= high))
    shortlisted = (a_lq[:n_cand] >= params.alpha_A) & (c_lq >= params.alpha_C) & difficulty_ok
    short = np.flatnonzero(shortlisted)
    counts.update(pairs=len(keys), shortlisted=len(short))

    # Duplicate scores of the shortlist, on demand on its nearest neighbours with the same cheap features.
    pair_a, pair_b, pair_t, pair_u, pair_s, support = [pa], [pb], [t_sym], [u_sym], [s_pair], [np.ones(len(pa), bool)]
    if len(short) > 1:
        found = _knn(embeddings[short], embeddings[short], params.k_neighbours)
        dq = short[np.repeat(np.arange(len(short)), found.shape[1])]
        du = np.where(found >= 0, short[np.clip(found, 0, None)], -1).ravel()
        ok = (du >= 0) & (du != dq)
        dkeys = np.setdiff1d(np.unique(_pair_key(dq[ok], du[ok], n_rows)), keys)
        da, db = dkeys // n_rows, dkeys % n_rows
        dt, du_sym, ds = models.scores(featurize(da, db), featurize(db, da), params.lambda_dup)
        pair_a.append(da), pair_b.append(db), pair_t.append(dt), pair_u.append(du_sym), pair_s.append(ds)
        support.append(np.zeros(len(da), bool))
    counts["duplicate_checks"] = int(sum(len(a) for a in pair_a[1:]))

    in_bank = np.zeros(n_pool, dtype=bool)
    in_bank[bank] = True
    in_dedup = np.zeros(n_pool, dtype=bool)
    in_dedup[bank_dedup] = True
    c_full = np.full(n_pool, np.nan)
    c_full[:n_cand] = c_hat
    c_lq_full = np.full(n_pool, np.nan)
    c_lq_full[:n_cand] = c_lq
    short_full = np.zeros(n_pool, dtype=bool)
    short_full[short] = True
    items = pl.DataFrame(
        {
            "item_id": ids[:n_pool],
            "role": ["candidate"] * n_cand + ["anchor"] * (n_pool - n_cand),
            "stratum": [strata_names[h] for h in strata_arr[:n_pool]],
            "method_family": [s.method_family for s in signatures[:n_pool]],
            "core_principle": [s.core_principle for s in signatures[:n_pool]],
            "answer_type": [s.answer_type for s in signatures[:n_pool]],
            "constraints": [list(s.constraints) for s in signatures[:n_pool]],
            "raw_alignment": raw[:n_pool],
            "fallback": [s.fallback for s in signatures[:n_pool]],
            "rechecked": [s.rechecked for s in signatures[:n_pool]],
            "a_hat": a_hat,
            "a_lq": a_lq,
            "in_bank": in_bank,
            "in_bank_dedup": in_dedup,
            "mu": mu[:n_pool],
            "c_hat": c_full,
            "c_lq": c_lq_full,
            "shortlisted": short_full,
        },
        schema_overrides={"constraints": pl.List(pl.String)},
    ).with_columns(pl.col("c_hat", "c_lq").fill_nan(None))
    pairs = pl.DataFrame(
        {
            "q_id": [ids[a] for a in np.concatenate(pair_a).tolist()],
            "u_id": [ids[b] for b in np.concatenate(pair_b).tolist()],
            "t_sym": np.concatenate(pair_t),
            "u_sym": np.concatenate(pair_u),
            "s": np.concatenate(pair_s),
            "in_support": np.concatenate(support),
        }
    )
    counts["fallback_signatures"] = int(sum(s.fallback for s in signatures))
    if len(short) == 0:
        reason = "empty shortlist: no candidate meets BootLQ(A) >= alpha_A, BootLQ(C) >= alpha_C and D in I_d"
        return CentralityResult(anchors.discipline, anchors.version, reason, fallback_used, items, pairs, None, counts)
    problem = build_problem(items, pairs, anchors, params)
    counts["duplicate_pairs"] = len(problem.conflicts)
    return CentralityResult(anchors.discipline, anchors.version, None, fallback_used, items, pairs, problem, counts)


def build_problem(
    items: pl.DataFrame, pairs: pl.DataFrame, anchors: AnchorSet, params: CentralityParams
) -> SelectionProblem:
    """The selection problem from scored items and pairs (in memory or read back from the database).

    Rows: the shortlist K_d (by item id). Columns: the bank B-bar_d with weights mu. S_sp = 1 for an item on itself,
    S_d on support pairs (u in G(q) or q in G(u)), 0 elsewhere. Duplicate pairs: shortlisted pairs with
    U_sym > tau_dup.
    """
    short = items.filter(pl.col("shortlisted")).sort("item_id")
    bank = items.filter(pl.col("in_bank_dedup")).sort("item_id")
    row = {item: i for i, item in enumerate(short["item_id"].to_list())}
    col = {item: j for j, item in enumerate(bank["item_id"].to_list())}
    rows, cols, vals = [], [], []
    for item, i in row.items():
        if item in col:
            rows.append(i), cols.append(col[item]), vals.append(1.0)
    conflicts = []
    for q, u, u_sym, s, in_support in pairs.select("q_id", "u_id", "u_sym", "s", "in_support").iter_rows():
        if in_support and s > 0:
            for a, b in ((q, u), (u, q)):
                if a in row and b in col:
                    rows.append(row[a]), cols.append(col[b]), vals.append(s)
        if u_sym > params.tau_dup and q in row and u in row:
            conflicts.append((row[q], row[u]))
    names = [s.name for s in anchors.strata]
    index = {name: h for h, name in enumerate(names)}
    return SelectionProblem(
        candidate_ids=tuple(row),
        strata=np.array([index[h] for h in short["stratum"].to_list()], dtype=np.int64),
        stratum_names=tuple(names),
        lower=np.array([s.lower for s in anchors.strata]),
        upper=np.array([s.upper for s in anchors.strata]),
        weights=bank["mu"].to_numpy(),
        coverage=sp.csr_matrix((vals, (rows, cols)), shape=(len(row), len(col))),
        k=anchors.k_total,
        conflicts=np.array(conflicts, dtype=np.int64).reshape(-1, 2),
    )


def select(problem: SelectionProblem, params: CentralityParams) -> SelectionResult:
    """Lazy greedy with repair; for a moderate shortlist also the exact MIP, keeping the better set and tighter bound."""
    try:
        greedy = select_greedy(problem)
    except InfeasibleSelectionError as greedy_error:  # greedy-with-repair is a heuristic: let the MIP decide
        if problem.n > params.mip_max_candidates:
            raise
        try:
            return select_mip(problem, time_limit=params.mip_time_limit_s)
        except InfeasibleSelectionError:
            raise greedy_error from None  # it names the stratum that could not be filled
    if problem.n > params.mip_max_candidates:
        return greedy
    try:
        exact = select_mip(problem, time_limit=params.mip_time_limit_s)
    except InfeasibleSelectionError:  # no incumbent within the time limit: the greedy set stands
        return greedy
    best = exact if exact.objective > greedy.objective else greedy
    bound = min(greedy.upper_bound, exact.upper_bound)
    return best.model_copy(
        update={
            "method": f"{best.method}+mip_bound",
            "upper_bound": max(bound, best.objective),
            "certified_ratio": min(1.0, best.objective / bound) if bound > 1e-12 else 1.0,
        }
    )
