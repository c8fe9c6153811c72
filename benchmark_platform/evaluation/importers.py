"""Import per-item results produced elsewhere as evaluation runs (the frame of `results.py`).

Three formats:
- MMLU-Pro (TIGER-AI-Lab): the upstream per-model output file (`model_outputs_<MODEL>_5shots.zip`
  or its JSON list), and the derived correctness/predictions matrices of ../shared/data/mmlu_pro_outputs;
- lm-evaluation-harness sample logs (`samples_<task>_<date>.jsonl`, written with --log_samples);
- Inspect AI eval logs (`.json`, or the zipped `.eval` format).
Errors name the file and the line or record.
"""

from __future__ import annotations

import json
import re
import zipfile
from collections.abc import Iterator, Sequence
from functools import lru_cache
from pathlib import Path
from typing import Any

import polars as pl

from benchmark_platform.evaluation.config import ResultsImport
from benchmark_platform.evaluation.items import LETTERS
from benchmark_platform.evaluation.results import RESULT_SCHEMA, validate_results


def _frame(rows: list[dict[str, Any]], source: str) -> pl.DataFrame:
    return validate_results(pl.DataFrame(rows, schema=RESULT_SCHEMA, orient="row"), source)


def _jsonl(path: Path) -> Iterator[tuple[int, dict[str, Any]]]:
    with path.open(encoding="utf-8") as handle:
        for line_no, line in enumerate(handle, 1):
            if not line.strip():
                continue
            try:
                yield line_no, json.loads(line)
            except json.JSONDecodeError as exc:
                raise ValueError(f"{path}:{line_no}: invalid JSON ({exc.msg})") from None


# --------------------------------------------------------------------------- MMLU-Pro

_MMLU_PRO_FILE = re.compile(r"model_outputs_(?P<model>.+)_\d+shots\.(zip|json)$")


def read_mmlu_pro_outputs(path: Path) -> tuple[pl.DataFrame, int]:
    """One upstream MMLU-Pro output file -> (results, number of non-record entries skipped).

    The model name comes from the file name. Entries that are not JSON objects (DeepSeek-Coder-V2's
    file carries 43) are skipped and counted; `pred` null means the answer was not extracted.
    """
    match = _MMLU_PRO_FILE.search(path.name)
    if match is None:
        raise ValueError(f"{path}: not named model_outputs_<MODEL>_<k>shots.zip/.json")
    model = match["model"]
    if path.suffix == ".zip":
        with zipfile.ZipFile(path) as archive:
            members = [n for n in archive.namelist() if n.endswith(".json")]
            if len(members) != 1:
                raise ValueError(f"{path}: expected one JSON member, found {members}")
            records = json.loads(archive.read(members[0]))
    else:
        records = json.loads(path.read_text(encoding="utf-8"))
    if not isinstance(records, list):
        raise ValueError(f"{path}: expected a JSON list of records")
    rows, skipped = [], 0
    for index, record in enumerate(records):
        if not isinstance(record, dict):
            skipped += 1
            continue
        try:
            pred = record["pred"]
            rows.append(
                {
                    "model": model,
                    "item_id": str(record["question_id"]),
                    "discipline": record["category"],
                    "sample": 0,
                    "prediction": pred,
                    "correct": pred is not None and pred == record["answer"],
                }
            )
        except KeyError as exc:
            raise ValueError(f"{path}: record {index} lacks {exc}") from None
    return _frame(rows, str(path)), skipped


def read_mmlu_pro_matrices(folder: Path) -> pl.DataFrame:
    """The derived `correctness_matrix.csv` + `predictions_matrix.csv` of all models -> results.

    `NA` (item absent from that model's file) gives no row; `NULL` prediction is an unparsed answer.
    The two files must agree: correct == (prediction == answer) for every cell.
    """
    correctness = pl.read_csv(folder / "correctness_matrix.csv", infer_schema=False)
    predictions = pl.read_csv(folder / "predictions_matrix.csv", infer_schema=False)
    models = correctness.columns[4:]
    if predictions.columns != ["question_id", *models]:
        raise ValueError(f"{folder}: the two matrices list different models")
    long_c = correctness.unpivot(
        index=["question_id", "category", "answer"], on=models, variable_name="model", value_name="c"
    )
    long_p = predictions.unpivot(index="question_id", on=models, variable_name="model", value_name="p")
    both = long_c.join(long_p, on=["question_id", "model"], how="left", validate="1:1")
    bad = both.filter((pl.col("c") == "NA") != (pl.col("p") == "NA"))
    if bad.height:
        raise ValueError(f"{folder}: NA cells differ between the matrices, e.g. {bad.row(0, named=True)}")
    both = both.filter(pl.col("c") != "NA").with_columns(
        prediction=pl.when(pl.col("p") == "NULL").then(None).otherwise(pl.col("p")),
        correct=pl.col("c") == "1",
    )
    bad = both.filter(pl.col("correct") != (pl.col("prediction") == pl.col("answer")).fill_null(False))
    if bad.height:
        raise ValueError(f"{folder}: correctness disagrees with prediction, e.g. {bad.row(0, named=True)}")
    frame = both.select(
        "model",
        item_id=pl.col("question_id"),
        discipline=pl.col("category"),
        sample=pl.lit(0, pl.Int32),
        prediction="prediction",
        correct="correct",
    ).sort("model", pl.col("item_id").cast(pl.Int64))
    return validate_results(frame, str(folder))


def read_mmlu_pro_items(folder: Path) -> pl.DataFrame:
    """The 12,032 items (items_by_category/*.jsonl): item_id, discipline, src, question, options, answer.

    Lines are split on newlines only: some questions contain U+0085, which str.splitlines would cut.
    """
    rows = []
    for path in sorted((folder / "items_by_category").glob("*.jsonl")):
        for line_no, record in _jsonl(path):
            try:
                rows.append({"item_id": str(record["question_id"])} | {k: record[k] for k in _ITEM_KEYS})
            except KeyError as exc:
                raise ValueError(f"{path}:{line_no}: missing {exc}") from None
    if not rows:
        raise ValueError(f"{folder}: no items_by_category/*.jsonl")
    frame = pl.DataFrame(rows, schema_overrides={"options": pl.List(pl.String)})
    return frame.rename({"category": "discipline"}).sort(pl.col("item_id").cast(pl.Int64))


_ITEM_KEYS = ("category", "src", "question", "options", "answer")


# --------------------------------------------------------------- lm-evaluation-harness


def _lm_eval_model(samples_path: Path) -> str:
    """The model name of the results_*.json written beside a samples file."""
    results = sorted(samples_path.parent.glob("results_*.json"))
    if not results:
        raise ValueError(f"{samples_path}: no model given and no results_*.json beside it")
    header = json.loads(results[-1].read_text(encoding="utf-8"))
    name = header.get("model_name")
    if not name:
        args = str(header.get("config", {}).get("model_args", ""))
        found = re.search(r"(?:pretrained|model)=([^,]+)", args)
        name = found.group(1) if found else None
    if not name:
        raise ValueError(f"{results[-1]}: no model_name nor pretrained=/model= in config.model_args")
    return str(name)


def read_lm_eval_samples(
    path: Path,
    *,
    model: str | None = None,
    metric: str | None = None,
    filter_name: str | None = None,
    item_key: str | None = None,
    discipline_key: str | None = None,
    discipline: str | None = None,
) -> pl.DataFrame:
    """An lm-evaluation-harness `samples_<task>_<date>.jsonl` -> results.

    Each line is one document: doc_id, doc, target, arguments, resps, filtered_resps, filter,
    metrics, then the metric values. `metric` defaults to `acc` (multiple-choice tasks scored by
    log-likelihood) or else `exact_match` (generative tasks). For log-likelihood tasks the
    prediction is the letter of the highest-scoring choice; for generative ones, the filtered
    response. With several filters logged per document, `filter_name` picks one (default: the
    first seen). Item ids come from `doc[item_key]` (default `doc_id`); the discipline from
    `doc[discipline_key]`, else the constant `discipline`, else the task name in the file name.
    """
    model = model or _lm_eval_model(path)
    task = re.sub(r"^samples_(.+?)_\d{4}-\d{2}-\d{2}T.*$", r"\1", path.name.removesuffix(".jsonl"))
    rows: list[dict[str, Any]] = []
    for line_no, record in _jsonl(path):
        where = f"{path}:{line_no}"
        filter_seen = record.get("filter", "none")
        filter_name = filter_name or filter_seen
        if filter_seen != filter_name:
            continue
        name = metric or ("acc" if "acc" in record else "exact_match")
        if name not in record:
            raise ValueError(f"{where}: no metric {name!r} (has {record.get('metrics')})")
        doc = record.get("doc", {})
        try:
            item_id = str(doc[item_key] if item_key else record["doc_id"])
            group = doc[discipline_key] if discipline_key else (discipline or task)
        except KeyError as exc:
            raise ValueError(f"{where}: missing {exc}") from None
        rows.append(
            {
                "model": model,
                "item_id": item_id,
                "discipline": str(group),
                "sample": 0,
                "prediction": _lm_eval_prediction(record.get("filtered_resps"), where),
                "correct": float(record[name]) >= 0.5,
            }
        )
    if not rows:
        raise ValueError(f"{path}: no samples for filter {filter_name!r}")
    return _frame(rows, str(path))


LM_EVAL_INVALID = "[invalid]"  # what lm-eval's regex filters return when nothing was extracted


def _lm_eval_prediction(filtered: Any, where: str) -> str | None:
    if not isinstance(filtered, list) or not filtered:
        raise ValueError(f"{where}: filtered_resps is not a non-empty list")
    first = filtered[0]
    if isinstance(first, list) and len(first) == 2:  # log-likelihood: one [loglik, is_greedy] per choice
        try:
            scores = [float(choice[0]) for choice in filtered]
        except (TypeError, ValueError, IndexError):
            raise ValueError(f"{where}: filtered_resps is not [[loglik, is_greedy], ...]") from None
        if len(scores) > len(LETTERS):
            raise ValueError(f"{where}: {len(scores)} choices, more than {len(LETTERS)} letters")
        return LETTERS[max(range(len(scores)), key=scores.__getitem__)]
    while isinstance(first, list):  # generative, possibly nested by repeats
        first = first[0] if first else None
    text = None if first is None else str(first).strip()
    return None if not text or text == LM_EVAL_INVALID else text


# ----------------------------------------------------------------------------- Inspect AI


def _inspect_parts(path: Path) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """(eval spec, samples) of a .json or zipped .eval Inspect log."""
    if path.suffix == ".eval":
        with zipfile.ZipFile(path) as archive:
            names = archive.namelist()
            header = next((n for n in ("header.json", "_journal/start.json", "start.json") if n in names), None)
            if header is None:
                raise ValueError(f"{path}: no header.json or _journal/start.json inside")
            spec = json.loads(archive.read(header)).get("eval")
            samples = [
                json.loads(archive.read(n)) for n in sorted(names) if n.startswith("samples/") and n.endswith(".json")
            ]
    else:
        log = json.loads(path.read_text(encoding="utf-8"))
        spec, samples = log.get("eval"), log.get("samples") or []
    if not isinstance(spec, dict) or "model" not in spec:
        raise ValueError(f"{path}: no eval.model in the log header")
    return spec, samples


_INSPECT_TRUE = {"C", 1}
_INSPECT_FALSE = {"I", "P", "N", 0}


def read_inspect_log(path: Path, *, scorer: str | None = None, discipline_key: str | None = None) -> pl.DataFrame:
    """An Inspect AI eval log -> results.

    Model = eval.model; sample = epoch - 1; correct = the score value is CORRECT ("C" or 1);
    prediction = the score's extracted `answer`, else the completion text. `scorer` picks a
    score when several are logged (default: the first). The discipline is
    `metadata[discipline_key]` or the task name.
    """
    spec, samples = _inspect_parts(path)
    model, task = spec["model"], spec.get("task", path.stem)
    rows: list[dict[str, Any]] = []
    for index, sample in enumerate(samples):
        where = f"{path}: sample {sample.get('id', index)!r} epoch {sample.get('epoch')}"
        scores = sample.get("scores") or {}
        if not scores:
            raise ValueError(f"{where}: no scores")
        name = scorer or next(iter(scores))
        if name not in scores:
            raise ValueError(f"{where}: no score {name!r} (has {sorted(scores)})")
        score = scores[name]
        value = score.get("value")
        if not isinstance(value, (str, int, float)) or value not in _INSPECT_TRUE | _INSPECT_FALSE:
            raise ValueError(f"{where}: score value {value!r} is neither correct nor incorrect")
        completion = ((sample.get("output") or {}).get("completion") or "").strip()
        prediction = score.get("answer") or completion or None
        group = (sample.get("metadata") or {}).get(discipline_key) if discipline_key else task
        if group is None or "id" not in sample or "epoch" not in sample:
            raise ValueError(f"{where}: missing id, epoch or metadata[{discipline_key!r}]")
        rows.append(
            {
                "model": model,
                "item_id": str(sample["id"]),
                "discipline": str(group),
                "sample": int(sample["epoch"]) - 1,
                "prediction": prediction,
                "correct": value in _INSPECT_TRUE,
            }
        )
    if not rows:
        raise ValueError(f"{path}: the log has no samples")
    return _frame(rows, str(path))


def read_results_import(entry: ResultsImport, base_dir: Path) -> pl.DataFrame:
    """One `evaluation.imports` entry of a spec -> results (model renamed when the entry names one)."""
    path = _import_path(entry, base_dir)
    if not path.exists():
        raise ValueError(f"evaluation.imports: {path} does not exist")
    if entry.format == "mmlu_pro_outputs":
        frame, _ = read_mmlu_pro_outputs(path)
    elif entry.format == "lm_eval_samples":
        frame = read_lm_eval_samples(path, model=entry.model, item_key=entry.item_key)
    elif entry.format == "results_parquet":
        frame = read_results_parquet(path)
    elif entry.format == "answers_csv":
        frame = read_answers_csv(entry, path, base_dir)
    else:
        frame = read_inspect_log(path)
    if entry.item_bank:
        frame = frame.with_columns(item_id=pl.lit(entry.item_prefix or f"{entry.item_bank}-") + pl.col("item_id"))
    return frame.with_columns(model=pl.lit(entry.model)) if entry.model else frame


def _import_path(entry: ResultsImport, base_dir: Path) -> Path:
    return entry.path if entry.path.is_absolute() else base_dir / entry.path


def read_import_once(entry: ResultsImport, base_dir: Path) -> pl.DataFrame:
    """`read_results_import`, read again only when the file changed: the audit, the selection and the analysis of
    every discipline read the same imports, and the re-audit sensor reads them every tick."""
    path = _import_path(entry, base_dir)
    stamp = path.stat().st_mtime_ns if path.exists() else 0
    return _read_import(entry.model_dump_json(), base_dir, stamp)


@lru_cache(maxsize=8)
def _read_import(entry_json: str, base_dir: Path, stamp: int) -> pl.DataFrame:
    return read_results_import(ResultsImport.model_validate_json(entry_json), base_dir)


def read_spec_imports(entries: Sequence[ResultsImport], base_dir: Path) -> pl.DataFrame | None:
    """Every `evaluation.imports` entry's answers (model, item_id, sample, correct) in one frame; None without any."""
    if not entries:
        return None
    return pl.concat(
        [read_import_once(entry, base_dir).select("model", "item_id", "sample", "correct") for entry in entries]
    )


def read_results_parquet(path: Path) -> pl.DataFrame:
    """A results frame stored as Parquet (model, item_id, discipline, sample, prediction, correct), e.g. the
    compact copy of MMLU-Pro's 29 models' answers a bundled spec ships."""
    try:
        frame = pl.read_parquet(path)
    except Exception as exc:
        raise ValueError(f"{path}: not a readable Parquet file ({exc})") from None
    return validate_results(frame, str(path))


ANSWERS_CSV_COLUMNS = ("model", "id", "answer")  # and optionally `sample` (0-based draw of avg@k)


def read_answers_csv(entry: ResultsImport, path: Path, base_dir: Path) -> pl.DataFrame:
    """Recorded model answers on the spec's own bank (README "Your own bank"): one row per model, bank item id (the
    bank's upstream id) and answer, scored against the bank's key. An answer is exactly one option letter (or index,
    as the bank's answer_format) of that item, or the entry's `no_answer` marker (scored wrong, unparsed); anything
    else, an unknown id or model/id given twice, stops with one error naming the row."""
    # load_bank is cached: the bank stage reads the same file
    from benchmark_platform.itembank import csv_records, decode_text, load_bank, parse_key

    if entry.bank is None:
        raise ValueError(f"{path}: answers_csv needs the spec's item bank (evaluation.imports[].item_bank)")
    bank = {item.upstream_id: item for item in load_bank(entry.bank, base_dir).items}
    rows: list[dict[str, Any]] = []
    for line, record in csv_records(path, decode_text(path, path.read_bytes(), entry.encoding)):
        missing = [c for c in ANSWERS_CSV_COLUMNS if record.get(c) is None]
        if missing:
            raise ValueError(f"{path}:{line}: missing column {missing[0]!r} (columns: model, id, answer[, sample])")
        model, item_id, answer = (str(record[c]) for c in ANSWERS_CSV_COLUMNS)
        item = bank.get(item_id.strip())
        if item is None:
            raise ValueError(f"{path}:{line}: field 'id': {item_id!r} is not an id of the bank {entry.bank.path}")
        sample = (record.get("sample") or "0").strip()
        if not sample.isdigit():
            raise ValueError(f"{path}:{line}: field 'sample': {sample!r} is not a draw index 0, 1, ...")
        if answer == entry.no_answer:
            prediction = None
        else:
            index = parse_key(answer, len(item.options), entry.bank.answer_format)
            if isinstance(index, str):
                marker = f"or the no-answer marker {entry.no_answer!r} (evaluation.imports[].no_answer)"
                raise ValueError(f"{path}:{line}: field 'answer': {index}, {marker}")
            prediction = LETTERS[index]  # predictions are option letters, whatever the bank's key format
        rows.append(
            {
                "model": model.strip(),
                "item_id": item.upstream_id,
                "discipline": item.discipline,
                "sample": int(sample),
                "prediction": prediction,
                "correct": prediction == LETTERS[item.answer_index],
            }
        )
    if not rows:
        raise ValueError(f"{path}: no answers")
    return _frame(rows, str(path))
