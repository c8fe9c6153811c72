"""LLM-using assets queue on the Dagster pool of their busiest provider, so parallel partitions share its limits."""

from __future__ import annotations

import dagster as dg

from benchmark_platform.defs.generation import build_defs
from benchmark_platform.llm.config import ModelConfig
from benchmark_platform.spec import load_spec


def items_pool(generators: dict[str, str], gate: dict[str, str] | None = None) -> str | None:
    """The pool of the items asset when generators (name -> provider) and gate models (tier -> name) are set."""
    spec = load_spec("wine")
    models = [
        ModelConfig(name=name, family=name, base_url=f"https://{provider}.example/v1", model=name)
        for name, provider in generators.items()
    ]
    generation = spec.generation.model_copy(
        update={"generators": list(generators), "gate": spec.generation.gate.model_copy(update={"models": gate or {}})}
    )
    spec = spec.model_copy(update={"models": models, "generation": generation})
    (items,) = [a for a in build_defs(spec).assets if isinstance(a, dg.AssetsDefinition)]
    return items.op.pool


def test_without_models_the_asset_takes_its_stage_pool_not_a_provider_pool():
    (items,) = [a for a in build_defs(load_spec("wine")).assets if isinstance(a, dg.AssetsDefinition)]
    assert items.op.pool == "stage_items"


def test_one_provider_gives_its_pool():
    assert items_pool({f"gen{i}": "openrouter" for i in range(5)}) == "llm_openrouter_example"


def test_several_providers_give_the_busiest_ones_pool():
    generators = {"gen0": "alpha", "gen1": "alpha", "gen2": "alpha", "gen3": "beta", "gen4": "beta"}
    assert items_pool(generators) == "llm_alpha_example"
    # the gate answers most items: its model's provider carries the larger load
    assert items_pool(generators, {"L1": "gen3", "L2": "gen3", "L3": "gen4"}) == "llm_beta_example"
    # a tie goes to the first provider by name
    assert items_pool({"gen0": "beta", "gen1": "alpha"}) == "llm_alpha_example"


def test_evaluation_and_audit_queue_on_their_providers_pool():
    from benchmark_platform.defs.audit import build_defs as audit_defs
    from benchmark_platform.defs.evaluation import build_defs as evaluation_defs
    from benchmark_platform.evaluation.config import SlateEntry

    spec = load_spec("wine")
    models = [
        ModelConfig(name=n, family=n, base_url=f"https://{p}.example/v1", model=n)
        for n, p in (("big", "alpha"), ("small", "beta"), ("judge", "beta"))
    ]
    evaluation = spec.evaluation.model_copy(update={"slate": [SlateEntry(model="big", k=4), SlateEntry(model="small")]})
    audit = spec.audit.model_copy(update={"judges": ["judge", "small", "big"]})
    spec = spec.model_copy(update={"models": models, "evaluation": evaluation, "audit": audit})
    pools = {
        a.key.path[-1]: a.op.pool
        for build in (audit_defs, evaluation_defs)
        for a in build(spec).assets
        if isinstance(a, dg.AssetsDefinition)
    }
    assert pools["evaluation_answers"] == "llm_alpha_example"  # 4 samples per item from alpha, 1 from beta
    assert pools["audit_findings"] == "llm_beta_example"  # two of the three judges
    assert pools["audit_calibration"] is None
