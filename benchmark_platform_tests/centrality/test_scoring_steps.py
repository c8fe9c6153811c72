"""The named steps of score_discipline, each on its own: inputs, the item table, faiss neighbours, bank weights,
neighbourhood pairs, C_d, the shortlist and the duplicate-pair count."""

from __future__ import annotations

import numpy as np
import pytest

from benchmark_platform.anchors import AnchorItem, AnchorSet, LabelledItem, PairLabel, Prototype, Stratum
from benchmark_platform.centrality.config import CentralityParams
from benchmark_platform.centrality.models import Candidate
from benchmark_platform.centrality.scoring import (
    PairModels,
    ScoredPairs,
    bank_weights,
    centrality,
    duplicate_pair_count,
    item_table,
    missing_inputs,
    nearest,
    shortlist,
    support_pairs,
)
from benchmark_platform.embed.exact import integer_rows, similarities


def _anchors(**update: object) -> AnchorSet:
    anchors = AnchorSet(
        discipline="wine",
        version="0" * 64,
        is_example=True,
        k_total=2,
        prototype=Prototype(concepts=("terroir",)),
        anchor_items=(AnchorItem(id="a1", text="Terroir shapes wine", stratum="prose"),),
        item_labels=(
            LabelledItem(id="a1", text="Terroir shapes wine", y_A=1),
            LabelledItem(id="l1", text="Stocks fell today", y_A=0),
        ),
        pair_labels=(PairLabel(q="a1", u="l1", y_T=0, y_U=0),),
        strata=(
            Stratum(name="prose", omega=0.75, lower=0, upper=2, keys=("sentence",)),
            Stratum(name="table", omega=0.25, lower=0, upper=2),
        ),
        files=("anchors.yaml",),
    )
    return anchors.model_copy(update=update)


def _candidates() -> list[Candidate]:
    return [
        Candidate(id="c1", text="Chalk soils drain well", stratum_key="sentence"),
        Candidate(id="c2", text="Riesling grows on slate", stratum_key="table", difficulty=0.9),
        Candidate(id="c3", text="Oak barrels add vanilla", stratum_key="elsewhere"),
    ]


def test_missing_inputs_name_what_cannot_be_fitted():
    assert missing_inputs(_candidates(), _anchors()) is None
    assert "A_d is empty" in missing_inputs(_candidates(), _anchors(anchor_items=()))
    assert "Cal_A" in missing_inputs(_candidates(), _anchors(item_labels=()))
    assert "g_T and g_U" in missing_inputs(_candidates(), _anchors(pair_labels=()))
    assert "raw pool" in missing_inputs([], _anchors())


def test_item_table_orders_candidates_anchors_then_labelled_items():
    anchors = _anchors(strata=(*_anchors().strata, Stratum(name="*", omega=0.1, lower=0, upper=1)))
    table = item_table(_candidates(), anchors)
    assert table.ids == ["c1", "c2", "c3", "a1", "l1"]  # a1 is labelled too but already a row
    assert (table.n_cand, table.n_pool) == (3, 4)
    assert table.anchor_rows.tolist() == [3]
    # a key the map lacks falls back to '*'; labelled items outside the pool have no stratum
    assert [table.strata_names[h] if h >= 0 else None for h in table.strata] == ["prose", "table", "*", "prose", None]


def test_item_table_refuses_an_unmapped_key_a_repeat_or_an_anchor_as_candidate():
    with pytest.raises(ValueError, match="'c3'.*'elsewhere'"):
        item_table(_candidates(), _anchors())
    with pytest.raises(ValueError, match="appears twice"):
        item_table([_candidates()[0]] * 2, _anchors())
    with pytest.raises(ValueError, match="also an anchor item"):
        item_table([Candidate(id="a1", text="x", stratum_key="sentence")], _anchors())


def test_nearest_is_exact_and_breaks_ties_by_row():
    rng = np.random.default_rng(0)
    small = rng.normal(size=(50, 8)).astype(np.float32)
    small /= np.linalg.norm(small, axis=1, keepdims=True)
    grid = integer_rows(small)
    found = nearest(grid, grid, k=3)
    assert found.shape == (50, 4) and (found[:, 0] == np.arange(50)).all()  # each row's nearest is itself
    sims = similarities(grid, grid)
    assert (np.take_along_axis(sims, found, axis=1)[:, :-1] >= np.take_along_axis(sims, found, axis=1)[:, 1:]).all()
    twins = integer_rows(np.repeat(small[:1], 6, axis=0))  # six equal rows: equal similarities rank by row
    assert nearest(twins, twins[:2], k=2).tolist() == [[0, 1, 2], [0, 1, 2]]
    assert nearest(grid[:2], grid[:1], k=3).tolist() == [[0, 1, -1, -1]]  # fewer rows than k + 1: -1 pads


def test_bank_weights_are_omega_spread_over_each_stratum_present():
    table = item_table(_candidates()[:2], _anchors())  # rows c1 (prose), c2 (table), a1 (prose), l1
    mu = bank_weights(table, np.array([0, 2]), np.array([0.75, 0.25]))  # 'table' absent: omega renormalised
    assert mu.tolist() == [0.5, 0.0, 0.5, 0.0]
    mu = bank_weights(table, np.array([0, 1, 2]), np.array([0.75, 0.25]))
    assert mu.tolist() == [0.375, 0.25, 0.375, 0.0] and mu.sum() == pytest.approx(1.0)


def test_support_pairs_hold_k_neighbours_in_the_bank_and_every_anchor():
    table = item_table(_candidates()[:2], _anchors())
    embeddings = np.eye(4, dtype=np.float32)
    embeddings[1] = [0.8, 0.6, 0, 0]  # c2 near c1
    pairs = support_pairs(table, embeddings, np.array([0, 1, 2]), CentralityParams(k_neighbours=1))
    assert sorted(zip(pairs.nb_q.tolist(), pairs.nb_u.tolist(), strict=True)) == [(0, 1), (1, 0)]
    assert (pairs.pa < pairs.pb).all() and len(set(pairs.keys.tolist())) == len(pairs.keys)
    assert {(int(a), int(b)) for a, b in zip(pairs.pa, pairs.pb, strict=True)} == {(0, 1), (0, 2), (1, 2)}
    assert pairs.an_idx.shape == (2, 1)


def test_centrality_is_the_bank_sum_plus_the_anchor_tail():
    table = item_table(_candidates()[:2], _anchors())
    embeddings = np.eye(4, dtype=np.float32)
    pairs = support_pairs(table, embeddings, np.array([0, 1, 2]), CentralityParams(k_neighbours=1))
    mu = np.array([0.25, 0.25, 0.5, 0.0])
    s = np.linspace(0.1, 0.9, len(pairs.keys))
    got = centrality(pairs, mu, np.array([1.0]), s, table.n_cand)
    for q in range(table.n_cand):
        mine = pairs.nb_q == q
        bank_part = (mu[pairs.nb_u[mine]] * s[pairs.nb_idx[mine]]).sum()
        tail = (1 - mu[pairs.nb_u[mine]].sum()) * s[pairs.an_idx[q, 0]]
        assert got[q] == pytest.approx(bank_part + tail)


def test_pair_models_clip_s_at_zero():
    rng = np.random.default_rng(3)
    phi = rng.random((40, 3))
    models = PairModels(phi, phi[::-1], (phi[:, 0] > 0.5).astype(int), (phi[:, 1] > 0.5).astype(int))
    t_sym, u_sym, s = models.scores(phi, phi[::-1], lambda_dup=2.0)
    assert (s >= 0).all() and np.allclose(s, np.maximum(t_sym - 2.0 * u_sym, 0))


def test_shortlist_needs_both_lower_quantiles_and_a_difficulty_in_the_interval():
    candidates = _candidates()  # c2 has difficulty 0.9, the others none
    params = CentralityParams(alpha_A=0.5, alpha_C=0.1, difficulty_interval=(0.0, 0.8))
    a_lq = np.array([0.6, 0.9, 0.4, 1.0])  # the anchor row after the candidates is ignored
    c_lq = np.array([0.2, 0.5, 0.9])
    assert shortlist(candidates, a_lq, c_lq, params).tolist() == [0]
    assert shortlist(candidates, a_lq, c_lq, params.model_copy(update={"difficulty_interval": (0, 1)})).tolist() == [
        0,
        1,
    ]


def test_duplicate_pairs_are_those_of_two_shortlisted_items_over_tau():
    ones = np.ones(3, dtype=bool)
    scored = [
        ScoredPairs(np.array([0, 0, 1]), np.array([1, 2, 2]), np.zeros(3), np.array([0.9, 0.9, 0.4]), np.zeros(3), ones)
    ]
    assert duplicate_pair_count(scored, np.array([0, 1]), 3, tau_dup=0.5) == 1  # (0, 2): 2 is not shortlisted
    assert duplicate_pair_count(scored, np.array([0, 1, 2]), 3, tau_dup=0.3) == 3
