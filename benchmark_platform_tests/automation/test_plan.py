from hypothesis import given
from hypothesis import strategies as st

from benchmark_platform.automation.plan import plan_runs

KEYS = [f"k{i:02d}" for i in range(20)]


def test_single_run_policy_covers_each_contiguous_stretch_with_one_run() -> None:
    assert plan_runs(KEYS, KEYS, None) == [KEYS]
    assert plan_runs(KEYS, ["k00", "k01", "k05", "k06", "k07"], None) == [["k00", "k01"], ["k05", "k06", "k07"]]


def test_default_policy_gives_one_run_per_key_and_caps_are_honoured() -> None:
    assert plan_runs(KEYS, ["k03", "k01"], 1) == [["k01"], ["k03"]]
    assert plan_runs(KEYS, KEYS[:5], 2) == [["k00", "k01"], ["k02", "k03"], ["k04"]]


@given(st.sets(st.sampled_from(KEYS)), st.one_of(st.none(), st.integers(1, 6)))
def test_every_wanted_key_is_in_exactly_one_run_in_order(wanted: set[str], cap: int | None) -> None:
    runs = plan_runs(KEYS, wanted, cap)
    flat = [k for run in runs for k in run]
    assert flat == [k for k in KEYS if k in wanted]
    for run in runs:
        assert cap is None or len(run) <= cap
        positions = [KEYS.index(k) for k in run]
        assert positions == list(range(positions[0], positions[0] + len(run)))  # contiguous: a range tag pair


def test_unknown_partition_is_an_error_naming_it() -> None:
    try:
        plan_runs(KEYS, ["nope"], None)
    except ValueError as exc:
        assert "nope" in str(exc)
    else:
        raise AssertionError("expected ValueError")
