"""KINA Appendix B on real data (MMLU-Pro), manual review, and the LLM signature path with a scripted double."""

from __future__ import annotations

import json

import numpy as np
import polars as pl
import pytest

from benchmark_platform.bench.selection import mmlu_pro_discipline
from benchmark_platform.centrality.config import CentralityParams
from benchmark_platform.centrality.scoring import score_discipline
from benchmark_platform.centrality.signature import SignatureError, uncertainty_set
from benchmark_platform.embed import StaticEmbedder
from benchmark_platform.selection.config import SelectionConfig
from benchmark_platform.selection.policy import build_problem, select


@pytest.fixture(scope="module")
def embed():
    return StaticEmbedder().encode


@pytest.fixture(scope="module")
def philosophy(shared_data):
    """A 400-item slice of MMLU-Pro philosophy with anchors derived from the data (not expert-elicited)."""
    folder = shared_data / "mmlu_pro_outputs" / "items_by_category"
    own = pl.read_ndjson(folder / "philosophy.jsonl").select("question_id", "question", "category", "src").head(400)
    other = pl.concat(
        [
            pl.read_ndjson(folder / f"{c}.jsonl").select("question_id", "question", "category", "src").head(200)
            for c in ("law", "chemistry")
        ]
    )
    return mmlu_pro_discipline("philosophy", pl.concat([own, other]), 30, np.random.default_rng(7))


@pytest.fixture(scope="module")
def scored(philosophy, embed):
    anchors, candidates = philosophy
    return score_discipline(candidates, anchors, CentralityParams(bootstrap=20), embed, tau_dup=TAU_DUP)


TAU_DUP = SelectionConfig().tau_dup  # the selection's duplicate bound, which Dedup(B_d) applies too


def test_scores_follow_appendix_b_on_real_items(scored, philosophy):
    anchors, candidates = philosophy
    items = scored.items
    assert scored.manual_review is None and scored.fallback_used
    assert items.height == len(candidates) + len(anchors.anchor_items)
    # BootLQ is a lower quantile of the refits: never above the point fit by much, in [0, 1]
    assert items["a_lq"].is_between(0, 1).all() and (items["a_lq"] <= items["a_hat"] + 0.25).all()
    # mu is a distribution on the deduplicated bank only
    assert items.filter(~pl.col("in_bank_dedup"))["mu"].sum() == 0
    assert items["mu"].sum() == pytest.approx(1.0)
    assert items.filter(pl.col("in_bank_dedup"))["in_bank"].all()
    # C is defined for candidates only; anchors are reference items, never candidates
    assert items.filter(pl.col("role") == "anchor")["c_hat"].null_count() == len(anchors.anchor_items)
    assert not items.filter(pl.col("role") == "anchor")["shortlisted"].any()
    # S = [T - lambda U]_+ in [0, 1]
    pairs = scored.pairs
    assert (pairs["s"] >= 0).all() and (pairs["s"] <= pairs["t_sym"] + 1e-12).all()
    shortlisted = items.filter(pl.col("shortlisted"))
    params = CentralityParams(bootstrap=20)
    assert (shortlisted["a_lq"] >= params.alpha_A).all() and (shortlisted["c_lq"] >= params.alpha_C).all()


def test_certified_selection_on_real_items(scored, philosophy):
    anchors, _ = philosophy
    problem = build_problem(scored.items, scored.pairs, anchors, SelectionConfig().tau_dup)
    assert len(problem.conflicts) == scored.counts["duplicate_pairs"]  # centrality counts the pairs the bound uses
    result = select(problem, SelectionConfig(mip_max_candidates=0))
    assert len(result.selected_ids) == anchors.k_total
    assert problem.violations(np.array(result.selected)) == []
    assert 0.5 < result.certified_ratio <= 1.0
    assert result.objective <= result.upper_bound


def test_empty_bank_or_no_anchors_goes_to_manual_review(philosophy, embed):
    anchors, candidates = philosophy
    strict = score_discipline(candidates, anchors, CentralityParams(bootstrap=5, alpha_ref=1.0), embed, tau_dup=TAU_DUP)
    assert strict.pairs.is_empty() and "empty reference bank" in strict.manual_review
    nothing_passes = score_discipline(
        candidates, anchors, CentralityParams(bootstrap=5, alpha_C=1.0), embed, tau_dup=TAU_DUP
    )
    assert "empty shortlist" in nothing_passes.manual_review
    assert not nothing_passes.items.is_empty()  # the scores are still recorded
    bare = score_discipline(
        candidates, anchors.model_copy(update={"anchor_items": ()}), CentralityParams(), embed, tau_dup=TAU_DUP
    )
    assert bare.items.is_empty() and "A_d is empty" in bare.manual_review


def test_unmapped_stratum_key_names_the_candidate(philosophy, embed):
    anchors, candidates = philosophy
    odd = [candidates[0].model_copy(update={"stratum_key": "nowhere"}), *candidates[1:]]
    with pytest.raises(ValueError, match=f"candidate '{candidates[0].id}'.*'nowhere'"):
        score_discipline(odd, anchors, CentralityParams(bootstrap=5), embed, tau_dup=TAU_DUP)


class ScriptedLLM:
    """An LLM double: answers each prompt from a script and counts calls."""

    def __init__(self, answer) -> None:
        self.answer = answer
        self.prompts: list[str] = []

    def __call__(self, prompts):
        self.prompts += prompts
        return [self.answer(p) for p in prompts]


def test_llm_signatures_recheck_only_the_uncertainty_set(philosophy, embed):
    anchors, candidates = philosophy
    candidates = candidates[:120]

    def answer(prompt: str) -> str:
        aligned = "philosoph" in prompt.lower() or "moral" in prompt.lower()
        value = 0.55 if "Kant" in prompt else (0.9 if aligned else 0.2)
        return (
            "```json\n"
            + json.dumps(
                {
                    "method_family": "argument analysis",
                    "core_principle": "ethics",
                    "answer_type": "entity",
                    "constraints": ["not"],
                    "alignment": value,
                }
            )
            + "\n```"
        )

    llm = ScriptedLLM(answer)
    params = CentralityParams(bootstrap=5)
    result = score_discipline(candidates, anchors, params, embed, complete=llm, tau_dup=TAU_DUP)
    assert not result.fallback_used and result.items["fallback"].sum() == 0
    rechecks = [p for p in llm.prompts if "second, independent check" in p]
    rows = (
        len(candidates)
        + len(anchors.anchor_items)
        + len({i.id for i in anchors.item_labels} - {c.id for c in candidates} - {a.id for a in anchors.anchor_items})
    )
    assert len(llm.prompts) == rows + len(rechecks) == result.counts["llm_calls"]
    assert len(rechecks) <= params.recheck_share * rows
    assert all("Kant" in p for p in rechecks)


def test_invalid_llm_output_raises_before_anything_is_returned(philosophy, embed):
    anchors, candidates = philosophy
    llm = ScriptedLLM(lambda p: '{"method_family": "x", "alignment": 7}')
    with pytest.raises(SignatureError, match=candidates[0].id):
        score_discipline(candidates[:10], anchors, CentralityParams(bootstrap=5), embed, complete=llm, tau_dup=TAU_DUP)


def test_uncertainty_set_is_capped_at_rho_n():
    raw = np.array([0.5, 0.52, 0.9, 0.45, 0.1, 0.6, 0.49, 0.3, 0.7, 0.51])
    chosen = uncertainty_set(raw, CentralityParams(uncertainty_band=0.15, recheck_share=0.3))
    assert chosen.tolist() == [0, 6, 9]  # |A~ - 1/2| = 0, 0.01, 0.01 (0.02 is fourth)
