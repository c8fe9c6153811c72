"""Evaluation settings in a benchmark spec: the model slate, imported result files, the random baseline."""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, PositiveFloat, PositiveInt

from benchmark_platform.itembank.config import ItemBankConfig


class ConfigTraits(BaseModel):
    """What the analyses need to know about an evaluated configuration besides its answers."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    reasoning_of: str | None = None  # the standard configuration this one is the thinking variant of (lift)
    tool_use_of: str | None = None  # the configuration this one adds tools (e.g. web search) to
    params_b: PositiveFloat | None = None  # total parameters in billions (parameter scaling)


class SlateEntry(ConfigTraits):
    """One configuration of the spec's model configs (`models`, by name) evaluated through the LLM gateway."""

    model: str
    k: PositiveInt = 1  # avg@k: answers per item, at the model config's temperature
    scoring: Literal["generate", "likelihood"] = "generate"  # likelihood: option-text log-probabilities
    logit_bias: bool = False  # stop 4 of the five-stop protocol, where the provider supports it


class ResultsImport(ConfigTraits):
    """Per-item results produced elsewhere on this benchmark's items, imported as an evaluation run."""

    format: Literal["mmlu_pro_outputs", "lm_eval_samples", "inspect_log", "results_parquet", "answers_csv"]
    path: Path  # relative to the spec's directory
    model: str | None = None  # configuration name; default: the name the file records
    family: str | None = None  # vendor family, for self-preference
    item_key: str | None = None  # lm-eval: the doc field holding our item id (default doc_id)
    item_bank: str | None = None  # the file's item ids are this item bank's upstream ids (item id `<bank>-<id>`)
    # answers_csv (columns model, id, answer; optional sample): each answer is one option letter (or index, as the
    # bank's answer_format), or exactly this marker for "the model gave no answer" (scored wrong, counted unparsed);
    # anything else is an error naming the row. Scored against the spec's item bank (`item_bank` required).
    no_answer: str = ""
    encoding: str = "utf-8"  # answers_csv's text encoding (as item_bank.encoding)
    # Filled by the spec from its item_bank (never written in a spec): what the bank's item ids start with
    # (itembank.config.bank_item_prefix), and the bank itself, which answers_csv is scored against.
    item_prefix: str | None = None
    bank: ItemBankConfig | None = None


class EvaluationConfig(BaseModel):
    model_config = ConfigDict(extra="forbid")

    random_baseline_samples: PositiveInt = 5  # avg@k of the random baseline
    slate: list[SlateEntry] = Field(default_factory=list)
    imports: list[ResultsImport] = Field(default_factory=list)
