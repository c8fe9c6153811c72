"""Exports of the open (dev) split to the harnesses people use, each a self-contained folder of the release:

- `exports/lm_eval/`: an lm-evaluation-harness task (YAML + a loader next to it + Parquet data), loaded with
  `lm_eval.tasks.TaskManager(include_path=...)`;
- `exports/inspect/`: an Inspect AI task file with its JSON Lines dataset (`inspect eval exports/inspect/<task>.py`);
- `exports/hf/`: a Hugging Face dataset folder (Parquet + a dataset card declaring the config), for
  `datasets.load_dataset(<folder>)`.

Every file carries the canary: Parquet key-value metadata, a record field in JSON Lines, a comment elsewhere.
"""

from __future__ import annotations

import json
from collections.abc import Callable

import polars as pl
import yaml

LETTERS = "ABCDEFGHIJ"

# the flat multiple-choice record every export shares
RECORD_COLUMNS = (
    "id",
    "discipline",
    "question",
    "choices",
    "letters",
    "answer",
    "answer_letter",
    "explanation",
    "difficulty",
    "strategy",
)


def mcq_records(items: pl.DataFrame, options: pl.DataFrame) -> pl.DataFrame:
    """One row per item: its options in presented order, the answer as index and letter."""
    choices = options.sort("item_id", "position").group_by("item_id", maintain_order=True).agg(choices=pl.col("text"))
    frame = items.join(choices, on="item_id", how="inner").sort("item_id")
    return frame.select(
        id="item_id",
        discipline="discipline",
        question="question",
        choices="choices",
        letters=pl.col("choices").list.len().map_elements(lambda n: list(LETTERS[:n]), return_dtype=pl.List(pl.String)),
        answer=pl.col("answer_index").cast(pl.Int64),
        answer_letter=pl.col("answer_index").map_elements(lambda i: LETTERS[i], return_dtype=pl.String),
        explanation="explanation",
        difficulty="difficulty",
        strategy="strategy",
    )


def task_name(spec_name: str, version: str) -> str:
    """A harness-safe task id, e.g. wine_v0_1."""
    return f"{spec_name}_{version.replace('.', '_')}"


def export_files(
    records: pl.DataFrame,
    spec_name: str,
    version: str,
    description: str,
    licence: str,
    canary: str,
    parquet: Callable[[pl.DataFrame], bytes],
) -> dict[str, bytes]:
    """Relative path -> bytes of every export. `parquet` writes a frame deterministically with the canary."""
    name = task_name(spec_name, version)
    data = parquet(records)
    files = {
        f"exports/lm_eval/{name}.yaml": _lm_eval_yaml(name, version, canary).encode(),
        "exports/lm_eval/utils.py": _lm_eval_loader(name, canary).encode(),
        f"exports/lm_eval/{name}.parquet": data,
        f"exports/inspect/{name}.py": _inspect_task(name, canary).encode(),
        f"exports/inspect/{name}.jsonl": _jsonl(records, canary),
        "exports/hf/data/dev-00000-of-00001.parquet": data,
        "exports/hf/README.md": _dataset_card(
            spec_name, version, description, licence, canary, records.height
        ).encode(),
    }
    return files


def _lm_eval_yaml(name: str, version: str, canary: str) -> str:
    doc_to_text = (
        "{{question.strip()}}\n{% for choice in choices %}{{letters[loop.index0]}}. {{choice}}\n{% endfor %}Answer:"
    )
    config = {
        "task": name,
        "output_type": "multiple_choice",
        "test_split": "dev",
        "doc_to_text": doc_to_text,
        "doc_to_choice": "{{letters}}",
        "doc_to_target": "{{answer}}",
        "metric_list": [{"metric": "acc", "aggregation": "mean", "higher_is_better": True}],
        "metadata": {"version": float(version.removeprefix("v")), "canary": canary},
    }
    body = yaml.safe_dump(config, sort_keys=False, allow_unicode=True, width=1000)
    body += "custom_dataset: !function utils.load\n"  # a tag safe_dump cannot write: the loader next to this file
    return f"# {canary}\n# lm-evaluation-harness task: lm_eval --include_path <this folder> --tasks {name} ...\n{body}"


def _lm_eval_loader(name: str, canary: str) -> str:
    return f'''"""Loads the {name} data next to this file (lm-evaluation-harness `custom_dataset`).

{canary}
"""

from pathlib import Path

import datasets


def load(**_metadata):
    return datasets.load_dataset("parquet", data_files={{"dev": str(Path(__file__).with_name("{name}.parquet"))}})
'''


def _inspect_task(name: str, canary: str) -> str:
    return f'''"""Inspect AI task: `inspect eval {name}.py --model <provider/model>`.

{canary}
"""

from pathlib import Path

from inspect_ai import Task, task
from inspect_ai.dataset import Sample, json_dataset
from inspect_ai.scorer import choice
from inspect_ai.solver import multiple_choice

DATA = Path(__file__).with_name("{name}.jsonl")


def record_to_sample(record: dict) -> Sample:
    return Sample(id=record["id"], input=record["question"], choices=record["choices"], target=record["answer_letter"],
                  metadata={{key: record[key] for key in ("discipline", "difficulty", "strategy")}})


@task
def {name}() -> Task:
    return Task(dataset=json_dataset(str(DATA), record_to_sample), solver=multiple_choice(), scorer=choice())
'''


def _jsonl(records: pl.DataFrame, canary: str) -> bytes:
    lines = [
        json.dumps({**row, "canary": canary}, ensure_ascii=False, sort_keys=True)
        for row in records.select(RECORD_COLUMNS).iter_rows(named=True)
    ]
    return ("\n".join(lines) + "\n").encode()


def _dataset_card(spec_name: str, version: str, description: str, licence: str, canary: str, rows: int) -> str:
    return f"""---
license: {licence.lower()}
pretty_name: {spec_name} {version}
configs:
- config_name: default
  data_files:
  - split: dev
    path: data/dev-*.parquet
---
# {spec_name} {version}

{description.strip()}

{rows} multiple-choice items (the open development split of the release). Load with
`datasets.load_dataset("<this folder>")`. The release's `datasheet.md` documents sources, licences and audit results.

Canary: {canary}
"""
