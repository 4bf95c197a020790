"""Population: islands, elites, selection, pinning, migration, checkpoints."""

import json
import random
from collections import Counter

import pytest

from evotui.core.metrics import Metrics
from evotui.engine.population import Candidate, Population


def make(
    pop,
    *,
    island=0,
    time_ms=None,
    score=None,
    status="accepted",
    reason=None,
    mutator="llm",
    parent=None,
    source=None,
):
    cid = pop.new_id()
    c = Candidate(
        id=cid,
        parent_id=parent,
        island=island,
        generation=1,
        mutator=mutator,
        source=source if source is not None else f"# program {cid}\n",
        status=status,
        reason=reason,
        metrics=Metrics(time_ms=time_ms),
        score=score,
    )
    pop.add(c)
    return c


def seeded(n_islands=1, **kw):
    pop = Population(n_islands=n_islands, **kw)
    seed = Candidate(
        id=pop.new_id(), source="# seed\n", mutator="seed", status="accepted",
        metrics=Metrics(time_ms=10.0),
    )
    pop.add(seed)
    return pop, seed


def test_fitness_prefers_score_then_speed():
    fast = Candidate(id="a", source="", status="accepted", metrics=Metrics(time_ms=1.0))
    slow = Candidate(id="b", source="", status="accepted", metrics=Metrics(time_ms=2.0))
    scored = Candidate(id="c", source="", status="accepted", metrics=Metrics(time_ms=100.0),
                       score=5.0)
    assert fast.fitness > slow.fitness
    assert scored.fitness == 5.0
    assert Candidate(id="d", source="", status="rejected",
                     metrics=Metrics(time_ms=0.1)).fitness is None
    assert Candidate(id="e", source="", status="pending").fitness is None


def test_seed_reaches_every_island_and_counts_once():
    pop, seed = seeded(n_islands=3)
    for island in range(3):
        assert [c.source for c in pop.members(island)] == [seed.source]
    assert pop.counts()["by_status"] == {"pending": 0, "accepted": 1, "rejected": 0}
    assert pop.best().id == seed.id


def test_rejected_and_pending_are_never_parents():
    pop, _ = seeded(n_islands=2)
    for i in range(20):
        make(pop, island=i % 2, status="rejected", reason="mismatch", score=1e9)
        make(pop, island=i % 2, status="pending")
    rng = random.Random(0)
    for _ in range(300):
        assert pop.select_parent(rng).status == "accepted"
    counts = pop.counts()
    assert counts["by_status"]["rejected"] == 20 and counts["by_status"]["pending"] == 20
    assert counts["by_reason"] == {"mismatch": 20}


def test_selection_prefers_fitter_but_explores():
    pop, seed = seeded(island_capacity=50, elite_size=3)
    cands = [make(pop, score=float(s)) for s in range(1, 21)]
    rng = random.Random(42)
    picks = Counter(pop.select_parent(rng).id for _ in range(3000))
    best, worst = cands[-1], cands[0]
    assert picks[best.id] > 5 * max(1, picks[worst.id])
    mean_pick = sum(pop.get(i).fitness * n for i, n in picks.items()) / 3000
    mean_pop = sum(c.fitness for c in pop.members(0)) / len(pop.members(0))
    assert mean_pick > mean_pop
    assert picks[worst.id] > 0 and picks[seed.id] > 0  # the weakest still get a chance
    assert len(picks) > 15


def test_islands_take_turns():
    pop, _ = seeded(n_islands=4)
    rng = random.Random(1)
    islands = [pop.select_parent(rng).island for _ in range(8)]
    assert set(islands) == {0, 1, 2, 3}


def test_no_parent_without_accepted_candidates():
    pop = Population(n_islands=2)
    make(pop, status="rejected", reason="crashed")
    with pytest.raises(LookupError):
        pop.select_parent(random.Random(0))


def test_pending_then_accepted_becomes_a_parent():
    pop = Population(n_islands=1)
    c = make(pop, status="pending")
    with pytest.raises(LookupError):
        pop.select_parent(random.Random(0))
    c.status, c.metrics = "accepted", Metrics(time_ms=1.0)
    pop.add(c)
    assert pop.select_parent(random.Random(0)).id == c.id
    assert len(pop) == 1


def test_pin_forces_the_next_parent_once():
    pop, _ = seeded(exploration=0.0, tournament_size=50)
    weak = make(pop, score=0.001)
    strong = make(pop, score=100.0)
    rng = random.Random(0)
    pop.pin(weak.id)
    assert pop.select_parent(rng).id == weak.id
    assert pop.select_parent(rng).id == strong.id
    rejected = make(pop, status="rejected", reason="timeout")
    with pytest.raises(ValueError):
        pop.pin(rejected.id)


def test_migration_moves_each_islands_best_along_the_ring():
    pop, seed = seeded(n_islands=3)
    star = make(pop, island=0, time_ms=1.0)
    rng = random.Random(0)
    assert pop.maybe_migrate(7, rng, interval=5) == []
    migrants = pop.maybe_migrate(10, rng, interval=5)
    assert pop.maybe_migrate(10, rng, interval=5) == []  # once per generation
    assert star.source in [c.source for c in pop.members(1)]
    assert star.source not in [c.source for c in pop.members(2)]
    moved = [m for m in migrants if m.source == star.source]
    assert len(moved) == 1 and moved[0].island == 1 and moved[0].fitness == star.fitness
    assert pop.best(1).source == star.source
    assert pop.counts()["by_status"]["accepted"] == 2  # copies are not evaluations
    assert pop.best().id == star.id


def test_inspirations_exclude_the_parent_and_start_with_the_best():
    pop, seed = seeded(n_islands=2)
    others = [make(pop, island=i % 2, time_ms=float(10 - i)) for i in range(6)]
    best = others[-1]
    rng = random.Random(5)
    parent = others[2]
    for _ in range(20):
        insp = pop.inspirations(parent, rng, k=3)
        assert len(insp) == 3
        assert insp[0].id == best.id
        assert all(c.id != parent.id and c.source != parent.source for c in insp)
        assert len({c.source for c in insp}) == 3
    assert all(c.id != best.id for c in pop.inspirations(best, rng, k=2))


def test_capacity_evicts_the_worst_but_keeps_history():
    pop, seed = seeded(island_capacity=4)
    cands = [make(pop, time_ms=float(t)) for t in (5, 3, 8, 1, 9, 2)]
    members = pop.members(0)
    assert len(members) == 4
    assert {c.metrics.time_ms for c in members} == {1.0, 2.0, 3.0, 5.0}
    assert all(c.id in pop for c in cands)
    assert len(pop.elites()) <= pop.elite_size


def test_elites_are_the_top_distinct_programs():
    pop, seed = seeded(n_islands=2, elite_size=3)
    a = make(pop, island=0, time_ms=1.0, source="A\n")
    make(pop, island=1, time_ms=1.0, source="A\n")  # same program found twice
    b = make(pop, island=1, time_ms=2.0, source="B\n")
    assert [c.id for c in pop.elites()] == [a.id, b.id, seed.id]


def test_round_trip_preserves_everything():
    pop, _ = seeded(n_islands=3, island_capacity=5)
    rng = random.Random(9)
    for i in range(25):
        parent = pop.select_parent(rng)
        status = "accepted" if i % 3 else "rejected"
        c = Candidate(
            id=pop.new_id(),
            parent_id=parent.id,
            island=parent.island,
            generation=i,
            source=f"# v{i}\n",
            mutator="param" if i % 2 else "llm",
            model="qwen",
            status=status,
            reason=None if status == "accepted" else "mismatch",
            message="m",
            metrics=Metrics(time_ms=1.0 + i % 7, speedup_eager=1.5, speedup_compile=0.9,
                            roofline_pct=42.0, launches=(("k", 1),), interpreter=True),
            advice_ids=["a1"],
            description="d",
            extra={"k": [1, 2]},
        )
        pop.add(c)
        pop.maybe_migrate(i, rng, interval=4)
    pop.pin(pop.best().id)
    data = json.loads(json.dumps(pop.to_dict()))
    back = Population.from_dict(data)
    assert back.to_dict() == pop.to_dict()
    assert [c.to_dict() for c in back.candidates()] == [c.to_dict() for c in pop.candidates()]
    r1, r2 = random.Random(3), random.Random(3)
    assert [pop.select_parent(r1).id for _ in range(30)] == [
        back.select_parent(r2).id for _ in range(30)
    ]
    assert pop.new_id() == back.new_id()
    assert Candidate.from_dict({**pop.best().to_dict(), "future_field": 1}) == pop.best()
