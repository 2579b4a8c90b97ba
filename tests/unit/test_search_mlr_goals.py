"""MLRsearch semantics: goals, targets, load classification, relevant bounds, conditional throughput."""

from __future__ import annotations

import pytest

from vsperf.errors import ConfigError
from vsperf.search.measurer import TrialResult
from vsperf.search.mlr_goals import (
    SearchGoal,
    Target,
    TrialDatabase,
    classify,
    goal_result,
    quantile_loss_ratio,
    relevant_bounds,
)


def trial(duration_s: float, loss_ratio: float, load: float = 1_000_000.0) -> TrialResult:
    tx = 1_000_000
    return TrialResult(
        kind="rate",
        frame_size_bytes=64,
        requested_rate_fps=load,
        duration_s=duration_s,
        tx_frames=tx,
        rx_frames=tx - round(tx * loss_ratio),
        actual_tx_rate_fps=load,
        line_rate_fps=10 * load,
    )


RFC2544 = SearchGoal("ndr", loss_ratio=0.0, exceed_ratio=0.0, final_duration_s=60.0, duration_sum_s=60.0,
                     width=0.005, initial_duration_s=1.0)
CSIT = SearchGoal("pdr", loss_ratio=0.005, exceed_ratio=0.5, final_duration_s=1.0, duration_sum_s=21.0,
                  width=0.005, initial_duration_s=1.0)
VALID = {"name": "x", "loss_ratio": 0.0, "exceed_ratio": 0.0, "final_duration_s": 60.0, "duration_sum_s": 60.0,
         "width": 0.005, "initial_duration_s": 1.0}


def final(goal: SearchGoal) -> Target:
    return goal.targets(0)[-1]


def test_rfc2544_goal_one_long_pass_is_a_lower_bound_and_any_loss_an_upper_bound() -> None:
    t = final(RFC2544)
    assert classify([trial(60, 0.0)], t) == "lower"
    assert classify([trial(1, 0.0)], t) == "undecided"  # short passes never make a lower bound
    assert classify([trial(1, 1e-6)], t) == "upper"  # exceed ratio 0: a short failure is decisive
    assert classify([trial(60, 0.0), trial(1, 0.01)], t) == "upper"
    assert classify([], t) == "undecided"


def test_exceed_ratio_and_duration_sum_balance_good_and_bad_trials() -> None:
    t = final(CSIT)  # 21 s of 1 s trials; up to half may lose more than 0.5 %
    assert classify([trial(1, 0.0)] * 10, t) == "undecided"
    assert classify([trial(1, 0.0)] * 11, t) == "lower"  # 10 more bad ones would still be <= 50 %
    assert classify([trial(1, 0.01)] * 11, t) == "upper"  # 11 of 21 already exceed
    assert classify([trial(1, 0.0)] * 10 + [trial(1, 0.01)] * 10, t) == "undecided"
    assert classify([trial(1, 0.0)] * 11 + [trial(1, 0.01)] * 10, t) == "lower"
    assert classify([trial(1, 0.004)] * 21, t) == "lower"  # 0.4 % is within the goal's loss


def test_short_trials_of_a_goal_with_exceed_ratio_balance_each_other() -> None:
    goal = SearchGoal("g", loss_ratio=0.0, exceed_ratio=0.5, final_duration_s=10, duration_sum_s=10,
                      width=0.005, initial_duration_s=1)
    t = final(goal)
    assert classify([trial(1, 0.1), trial(1, 0.0)], t) == "undecided"  # balanced: nothing effective
    assert classify([trial(1, 0.1)] * 6, t) == "upper"  # 6 s effective high loss > 50 % of 10 s


def test_targets_grow_from_initial_to_final_duration() -> None:
    chain = RFC2544.targets(2)
    assert [round(t.trial_duration_s, 3) for t in chain] == [1.0, 7.746, 60.0]
    assert [round(t.duration_sum_s, 3) for t in chain] == [1.0, 7.746, 60.0]
    assert [round(t.width, 6) for t in chain] == [round(1 - 0.995**4, 6), round(1 - 0.995**2, 6), 0.005]
    assert chain[-1].final and not chain[0].final
    assert chain[0].label == "1 s target 1/3" and chain[-1].label == "final"



def test_csit_goal_shrinks_the_duration_sum_per_preceding_target() -> None:
    # As the draft: 1 s trials throughout, sums 1, 4.58 and 21 s, and (with an exceed ratio)
    # widths whose log doubles per preceding target, so halving one lands on the next width.
    chain = CSIT.targets(2)
    assert [t.trial_duration_s for t in chain] == [1.0, 1.0, 1.0]
    assert [round(t.duration_sum_s, 2) for t in chain] == [1.0, 4.58, 21.0]
    assert [round(t.width, 6) for t in chain] == [round(1 - 0.995**4, 6), round(1 - 0.995**2, 6), 0.005]
    assert chain[1].label == "1 s (sum 4.58 s) target 2/3"
    assert classify([trial(1, 0.0)] * 3, chain[1]) == "lower"  # 3 of 4.58 s: 1.58 s more bad would be <= 50 %
    assert classify([trial(1, 0.01)] * 3, chain[1]) == "upper"
    assert len(CSIT.targets(0)) == 1


def test_relevant_bounds_ignore_lower_bounds_above_the_smallest_upper_bound() -> None:
    t = final(RFC2544)
    db = TrialDatabase()
    db.add(90.0, trial(60, 0.0, 90.0))
    db.add(95.0, trial(1, 0.0, 95.0))  # undecided
    db.add(100.0, trial(1, 0.01, 100.0))  # upper bound
    db.add(110.0, trial(60, 0.0, 110.0))  # a (noisy) pass above a failure: not relevant
    bounds = relevant_bounds(db, t)
    assert (bounds.lower_fps, bounds.upper_fps, bounds.undecided_fps) == (90.0, 100.0, (95.0,))
    assert bounds.width() == pytest.approx(0.1)


def test_conditional_throughput_takes_the_exceed_ratio_quantile_worst_first() -> None:
    t = final(CSIT)
    trials = tuple([trial(1, 0.0)] * 11 + [trial(1, 0.003)] * 5 + [trial(1, 0.02)] * 5)
    # 21 s * 0.5 = 10.5 s of the worst trials are skipped: the 11th worst has 0.0 loss.
    assert quantile_loss_ratio(trials, t) == 0.0
    assert quantile_loss_ratio(tuple([trial(60, 0.001)]), final(RFC2544)) == pytest.approx(0.001)
    assert quantile_loss_ratio((trial(1, 0.0),), final(RFC2544)) is None  # no full-length trial


def test_goal_result_states() -> None:
    goal = RFC2544
    db = TrialDatabase()
    db.add(100.0, trial(60, 0.0, 100.0))
    assert goal_result(db, goal, 1.0, max_load_fps=100.0).status == "max load is a lower bound"
    db.add(100.4, trial(1, 0.01, 100.4))
    result = goal_result(db, goal, 1.0, max_load_fps=200.0)
    assert result.status == "regular"
    assert result.lower_bound_fps == 100.0 and result.upper_bound_fps == 100.4
    assert result.conditional_throughput_fps == pytest.approx(100.0)
    assert len(result.lower_bound_trials) == 1
    empty = TrialDatabase()
    empty.add(5.0, trial(1, 0.5, 5.0))
    assert goal_result(empty, goal, 5.0, 200.0).status == "min load is an upper bound"
    wide = TrialDatabase()
    wide.add(50.0, trial(60, 0.0, 50.0))
    wide.add(100.0, trial(60, 0.5, 100.0))
    assert goal_result(wide, goal, 1.0, 200.0).status == "not narrowed"
    assert goal_result(empty, goal, 1.0, 200.0).status == "not narrowed"  # no lower bound, min load untried
    assert result.as_dict()["relevant_lower_bound_fps"] == 100.0


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"name": "NDR"}, "name"),
        ({"name": "x", "loss_ratio": 1.0}, "loss ratio"),
        ({"name": "x", "exceed_ratio": -0.1}, "exceed ratio"),
        ({"name": "x", "width": 0.0}, "width"),
        ({"name": "x", "initial_duration_s": 90.0}, "initial trial duration"),
        ({"name": "x", "duration_sum_s": 30.0}, "duration sum"),
    ],
)
def test_goal_validation_names_the_field(kwargs: dict[str, object], message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        SearchGoal(**{**VALID, **kwargs})  # type: ignore[arg-type]


def test_failed_confirmations_count_only_the_goals_own_long_trials() -> None:
    ndr, pdr = RFC2544, SearchGoal(name="pdr", loss_ratio=0.005, exceed_ratio=0.0, final_duration_s=60.0,
                                   duration_sum_s=60.0, width=0.005, initial_duration_s=1.0)
    db = TrialDatabase()
    db.add(100.0, trial(60, 0.0, 100.0), frozenset({"ndr"}))
    db.add(101.0, trial(60, 0.001, 101.0), frozenset({"pdr"}))  # PDR's pass, high-loss for NDR
    db.add(102.0, trial(60, 0.02, 102.0), frozenset({"ndr"}))  # NDR's failed confirmation, high-loss for PDR
    db.add(103.0, trial(1, 0.5, 103.0), frozenset({"ndr", "pdr"}))  # short: never a confirmation
    assert db.trials_run_for(101.0, "pdr") == db.trials_at(101.0)
    assert db.trials_run_for(101.0, "ndr") == ()
    assert goal_result(db, ndr, 1.0, 200.0).failed_confirmations == 1
    assert goal_result(db, pdr, 1.0, 200.0).failed_confirmations == 0

