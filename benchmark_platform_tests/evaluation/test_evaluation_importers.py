"""Importers of external per-item results: MMLU-Pro (real data), lm-evaluation-harness and Inspect AI logs."""

from __future__ import annotations

import json
import zipfile
from pathlib import Path

import polars as pl
import pytest

from benchmark_platform.analysis.matrix import ScoreMatrix
from benchmark_platform.evaluation.importers import (
    read_inspect_log,
    read_lm_eval_samples,
    read_mmlu_pro_items,
    read_mmlu_pro_matrices,
    read_mmlu_pro_outputs,
)

FIXTURES = Path(__file__).parent / "fixtures"
LM_EVAL = FIXTURES / "lm_eval" / "Qwen__Qwen2.5-7B-Instruct"
STAMP = "2026-11-29T15-02-11.483920"
INSPECT = FIXTURES / "inspect" / "2026-11-29T15-10-00+00-00_mmlu-pro_Bq8Lm2Xw7Kp4Rt9Zs3Nv6c.json"


@pytest.fixture(scope="module")
def mmlu_pro(shared_data: Path) -> pl.DataFrame:
    return read_mmlu_pro_matrices(shared_data / "mmlu_pro_outputs")


def test_mmlu_pro_matrices_keep_missing_and_unparsed_apart(mmlu_pro: pl.DataFrame) -> None:
    assert mmlu_pro["model"].n_unique() == 29
    assert mmlu_pro.height == 29 * 12_032 - 1_713  # NA cells (item absent from a model's file) give no row
    assert mmlu_pro.filter(pl.col("prediction").is_null()).height == 32_697  # NULL: answer not extracted
    per_model = mmlu_pro.group_by("model").len()
    assert dict(per_model.iter_rows())["DeepSeek-Coder-V2"] == 10_351
    assert not mmlu_pro.filter(pl.col("prediction").is_null())["correct"].any()


def test_mmlu_pro_accuracy_matches_upstream_summary(mmlu_pro: pl.DataFrame, shared_data: Path) -> None:
    folder = shared_data / "mmlu_pro_outputs"
    matrix = ScoreMatrix.from_results(mmlu_pro, read_mmlu_pro_items(folder).select("item_id", "discipline"))
    summary = pl.read_csv(folder / "model_summary.csv")
    ours = dict(zip(matrix.models, matrix.accuracy() / 100, strict=True))
    for model, expected in summary.select("model", "acc_over_12032").iter_rows():
        assert ours[model] == pytest.approx(expected, abs=5e-5), model
    assert matrix.missing()["gemini-1.5-flash-002"] == 20


def test_raw_upstream_zip_equals_its_matrix_column(mmlu_pro: pl.DataFrame, shared_data: Path) -> None:
    raw, skipped = read_mmlu_pro_outputs(
        shared_data / "mmlu_pro_outputs" / "raw_sample" / "model_outputs_Llama-2-7b-hf_5shots.zip"
    )
    assert skipped == 0 and raw.height == 12_032
    column = mmlu_pro.filter(pl.col("model") == "Llama-2-7b-hf")
    assert raw.sort("item_id").equals(column.sort("item_id"))


def test_mmlu_pro_items_survive_unicode_line_separators(shared_data: Path) -> None:
    items = read_mmlu_pro_items(shared_data / "mmlu_pro_outputs")
    assert items.height == 12_032 and items["item_id"].n_unique() == 12_032
    assert items.filter(pl.col("item_id") == "5215")["question"].item().endswith("\x85")
    assert items["options"].list.len().max() == 10 and items["options"].list.len().min() == 2


def test_lm_eval_generative_samples_with_unextracted_answer() -> None:
    frame = read_lm_eval_samples(
        LM_EVAL / f"samples_mmlu_pro_biology_{STAMP}.jsonl", item_key="question_id", discipline_key="category"
    )
    assert frame["model"].unique().to_list() == ["Qwen/Qwen2.5-7B-Instruct"]  # from results_*.json beside it
    assert frame.select("item_id", "discipline", "prediction", "correct").rows() == [
        ("2804", "biology", "B", True),
        ("2805", "biology", "D", True),
        ("2806", "biology", None, False),  # lm-eval's "[invalid]": nothing extracted
    ]


def test_lm_eval_loglikelihood_samples_pick_the_most_likely_choice() -> None:
    frame = read_lm_eval_samples(LM_EVAL / f"samples_mmlu_college_biology_{STAMP}.jsonl", model="qwen-7b")
    assert frame.select("item_id", "discipline", "prediction", "correct").rows() == [
        ("0", "mmlu_college_biology", "C", True),
        ("1", "mmlu_college_biology", "D", True),
        ("2", "mmlu_college_biology", "C", False),
    ]


def test_lm_eval_errors_name_file_and_line(tmp_path: Path) -> None:
    good = (LM_EVAL / f"samples_mmlu_college_biology_{STAMP}.jsonl").read_text().splitlines()
    bad = tmp_path / "samples_x_2026-01-01T00-00-00.jsonl"
    bad.write_text(good[0] + "\n{not json\n")
    with pytest.raises(ValueError, match=rf"{bad.name}:2: invalid JSON"):
        read_lm_eval_samples(bad, model="m")
    bad.write_text(good[0].replace('"acc": 1.0', '"accuracy": 1.0') + "\n")
    with pytest.raises(ValueError, match=rf"{bad.name}:1: no metric 'acc'"):
        read_lm_eval_samples(bad, model="m", metric="acc")
    with pytest.raises(ValueError, match="no model given and no results_"):
        read_lm_eval_samples(bad)


def test_inspect_json_log_with_epochs() -> None:
    frame = read_inspect_log(INSPECT, discipline_key="category")
    columns = ("model", "item_id", "discipline", "sample", "prediction", "correct")
    assert frame.sort("item_id", "sample").select(columns).rows() == [
        ("openai/gpt-4o-mini", "70", "business", 0, "I", True),
        ("openai/gpt-4o-mini", "70", "business", 1, "D", False),
        ("openai/gpt-4o-mini", "71", "business", 0, "F", True),
        ("openai/gpt-4o-mini", "71", "business", 1, "F", True),
    ]


def test_inspect_eval_zip_reads_like_the_json(tmp_path: Path) -> None:
    log = json.loads(INSPECT.read_text())
    path = tmp_path / "2026-11-29T15-10-00+00-00_mmlu-pro_Bq8Lm2Xw7Kp4Rt9Zs3Nv6c.eval"
    with zipfile.ZipFile(path, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("_journal/start.json", json.dumps({"version": 2, "eval": log["eval"], "plan": log["plan"]}))
        for sample in log["samples"]:
            archive.writestr(f"samples/{sample['id']}_epoch_{sample['epoch']}.json", json.dumps(sample))
        header = {k: log[k] for k in ("version", "status", "eval", "plan", "results", "stats")}
        archive.writestr("header.json", json.dumps(header))
    from_zip = read_inspect_log(path, discipline_key="category").sort("item_id", "sample")
    assert from_zip.equals(read_inspect_log(INSPECT, discipline_key="category").sort("item_id", "sample"))


def test_inspect_rejects_unknown_score_values(tmp_path: Path) -> None:
    log = json.loads(INSPECT.read_text())
    log["samples"][1]["scores"]["choice"]["value"] = 0.5
    path = tmp_path / "log.json"
    path.write_text(json.dumps(log))
    with pytest.raises(ValueError, match=r"log.json: sample 70 epoch 2: score value 0.5"):
        read_inspect_log(path)
