"""The asymptotic frontier's cost in time (issue 18, docs/autoscheduling-asymptotic.md): the
same frontiers as before the containment table and the shared legality checks, the deadline
(an incomplete frontier whose members still run), and frontiers kept in the disk cache so that
another process builds nothing."""

import hashlib
import os

import numpy as np
import pytest

import coiter as ct
from coiter.autosched import api, frontier_cache
from coiter.autosched.api import InstantChoice
from coiter.autosched.candidates import Problem
from coiter.autosched.frontier import frontier

MTTKRP = "A(i,j) = B(i,k,l) * C(k,j) * D(l,j)"
MTTKRP_FORMATS = {"A": "dd", "B": "sss", "C": "dd", "D": "dd"}
MTTKRP4 = "A(i,j) = B(i,k,l,m) * C(k,j) * D(l,j) * E(m,j)"
MTTKRP4_FORMATS = {"A": "dd", "B": "dsss", "C": "dd", "D": "dd", "E": "dd"}

# The frontiers of the construction before this one (commit af6725e: every cost compared with
# the frontier's by a new homomorphism search, every kernel judged anew): candidates, those
# that lower, members, and the first 16 hex digits of the SHA-256 of the members' programs
# and costs, one "program :: cost" line each in index order. (A whole dump of every
# candidate, order-4 MTTKRP's 84648 included, was compared too: identical.)
BEFORE = [
    ("A(i,j) = B(i,k) * C(k,l) * D(l,j)", "A:ss B:ss C:ss D:ss", (196, 80, 20, "7a94a6f44e162e94")),
    ("A(i,j) = B(i,k) * C(k,j) * D(k,j)", "A:ds B:ds C:ds D:ds", (382, 198, 5, "b314299f4775fd9a")),
    ("a(i) = B(i,j) * C(j,k) * d(k)", "a:d B:ds C:ds d:d", (13, 12, 10, "4b9c1f45c1f1be41")),
    (  # (SDDMM: 2 candidates more lower since its CSR result keeps B's pattern, which a loop
        # over k around the store fills without appending; the frontier is the same)
        "A(i,j) = B(i,j) * C(i,k) * D(k,j)",
        "A:ds B:ds C:dd D:dd",
        (382, 206, 36, "9a74a15d359d04db"),
    ),
    (MTTKRP, "A:dd B:sss C:dd D:dd", (2364, 1236, 282, "521a91c0befd97e7")),
    (MTTKRP, "A:dd B:dss C:dd D:dd", (2364, 1236, 114, "c898b7adaa286d7e")),
    ("A(i,j,k) = B(i,j,l) * C(k,l)", "A:dsd B:dss C:dd", (24, 8, 4, "bbd8f786b0ee8981")),
]


@pytest.mark.parametrize(("stmt", "formats", "expected"), BEFORE)
def test_the_frontier_is_the_one_built_before(stmt, formats, expected):
    built = frontier(stmt, dict(part.split(":") for part in formats.split()))
    assert built.complete
    text = "\n".join(f"{m.program} :: {m.cost}" for m in built.members)
    assert (
        len(built.candidates),
        sum(c.lowered for c in built.candidates),
        len(built.members),
        hashlib.sha256(text.encode()).hexdigest()[:16],
    ) == expected


def _mttkrp4_operands():
    rng = np.random.default_rng(1)
    B = ct.random((6, 5, 4, 3), density=0.3, format="dsss", seed=1)
    C, D, E = rng.random((5, 3)), rng.random((4, 3)), rng.random((3, 3))
    expected = np.einsum("iklm,kj,lj,mj->ij", B.to_numpy(), C, D, E)
    return {"B": B, "C": C, "D": D, "E": E}, expected


def test_a_deadline_cuts_the_frontier_whose_members_still_run(caplog):
    # Order-4 MTTKRP's universe is 84648 candidates (seconds to rank): cut at 50 ms, the
    # frontier is that of the first candidates, said at INFO, and its members compute MTTKRP.
    with caplog.at_level("INFO", logger="coiter"):
        cut = frontier(MTTKRP4, MTTKRP4_FORMATS, seconds=0.05)
    assert not cut.complete
    assert "was cut at its deadline" in caplog.text
    assert 0 < len(cut.candidates) < 84648 and cut.members
    assert "incomplete" in cut.report()
    assert all(m.lowered for m in cut.members)
    operands, expected = _mttkrp4_operands()
    for member in (cut.members[0], cut.members[-1]):
        np.testing.assert_allclose(member.evaluate(**operands).to_numpy(), expected, rtol=1e-12)


def test_a_passed_deadline_still_ranks_a_candidate_that_lowers():
    cut = frontier(MTTKRP, MTTKRP_FORMATS, seconds=0.0)
    assert not cut.complete and cut.members
    whole = frontier(MTTKRP, MTTKRP_FORMATS)
    assert whole.complete
    # The candidates ranked are the universe's first, as the whole enumeration has them.
    assert [c.program for c in cut.candidates] == [
        c.program for c in whole.candidates[: len(cut.candidates)]
    ]


def _summary(built):
    """What schedule="auto" reads of a built frontier, comparable across processes."""

    def base(b):
        return (
            b.member.index,
            b.member.cost,
            tuple(b.member.stages),
            {n: str(f) for n, f in b.conversions.items()},
            b.candidate,
        )

    return (
        [base(b) for b in built.bases],
        built.why_not,
        None if built.default is None else base(built.default),
        built.complete,
    )


def _refuse_to_build(*args, **kwargs):
    raise AssertionError("the frontier was built again")


def test_a_stored_frontier_is_reused_by_another_process(tmp_path, monkeypatch):
    monkeypatch.setenv("COITER_CACHE_DIR", str(tmp_path))
    problem = Problem.of(MTTKRP, MTTKRP_FORMATS)
    built = InstantChoice()._frontier_of(problem, bounded=True)
    assert built.complete and built.bases and built.default is not None
    [stored] = os.listdir(tmp_path / frontier_cache.DIRECTORY)
    assert stored.endswith(".json")
    # Another process: a new InstantChoice, and no frontier may be built.
    monkeypatch.setattr(api, "problem_frontier", _refuse_to_build)
    again = InstantChoice()._frontier_of(problem, bounded=True)
    assert _summary(again) == _summary(built)
    # Its members run: the pipeline of a member read back computes MTTKRP.
    rng = np.random.default_rng(2)
    B = ct.random((6, 5, 4), density=0.3, format="sss", seed=2)
    C, D = rng.random((5, 3)), rng.random((4, 3))
    expected = np.einsum("ikl,kj,lj->ij", B.to_numpy(), C, D)
    member = again.bases[-1].member
    np.testing.assert_allclose(member.pipeline()(B=B, C=C, D=D).to_numpy(), expected, rtol=1e-12)


def test_an_incomplete_stored_frontier_serves_no_longer_deadline(tmp_path, monkeypatch):
    monkeypatch.setenv("COITER_CACHE_DIR", str(tmp_path))
    problem = Problem.of(MTTKRP, MTTKRP_FORMATS)
    monkeypatch.setattr(ct.config, "frontier_seconds", 0.0)
    cut = InstantChoice()._frontier_of(problem, bounded=True)
    assert not cut.complete and cut.seconds == 0.0 and cut.bases
    assert frontier_cache.load(problem) is not None
    # schedule="auto" given explicitly asks for the whole frontier: built, and stored instead.
    whole = InstantChoice()._frontier_of(problem, bounded=False)
    assert whole.complete and len(whole.bases) > len(cut.bases)
    monkeypatch.setattr(api, "problem_frontier", _refuse_to_build)
    monkeypatch.setattr(ct.config, "frontier_seconds", 1.0)
    assert _summary(InstantChoice()._frontier_of(problem, bounded=True)) == _summary(whole)


def test_without_a_disk_cache_a_frontier_is_built_in_each_process(monkeypatch):
    monkeypatch.setattr(frontier_cache, "_path", lambda problem: None)
    problem = Problem.of(MTTKRP, MTTKRP_FORMATS)
    assert frontier_cache.load(problem) is None
    built = InstantChoice()._frontier_of(problem, bounded=True)
    assert built.complete and built.bases


@pytest.mark.parametrize(
    ("stmt", "formats"),
    [
        (MTTKRP, {"A": "dd", "B": "dss", "C": "dd", "D": "dd"}),
        ("A(i,j) = B(i,k) * C(k,l) * D(l,j)", {"A": "ss", "B": "ss", "C": "ss", "D": "ss"}),
        ("A(i,j) = B(i,j) * C(i,k) * D(k,j)", {"A": "ds", "B": "ds", "C": "dd", "D": "dd"}),
    ],
)
def test_the_instant_pick_is_the_first_of_the_whole_ranking(stmt, formats, tmp_path, monkeypatch):
    # schedule="auto" picks from one member per class the ranking cannot tell apart, and
    # estimates only the members whose lower bound can still win: on any statistics, the
    # member the whole ranking of all members puts first.
    monkeypatch.setenv("COITER_CACHE_DIR", str(tmp_path))
    problem = Problem.of(stmt, formats)
    built = InstantChoice()._frontier_of(problem)
    every, _ = api.frontier_bases(problem)
    assert 0 < len(built.bases) <= len(every)
    rng = np.random.default_rng(3)
    for _ in range(20):
        extents = {v: int(rng.integers(2, 5000)) for v in problem.variables}
        shapes, nonzeros = {}, {}
        for name, levels in problem.levels.items():
            if name == problem.result:
                continue
            shape = tuple(extents[level.variable] for level in levels)
            shapes[name] = shape
            full = int(np.prod(shape))
            dense = all(level.kind == "dense" for level in levels)
            nonzeros[name] = full if dense else max(1, int(full * 10.0 ** rng.uniform(-6, -0.5)))
        statistics = (extents, shapes, nonzeros)
        first = api._ranked(problem, every, *statistics)[0]
        picked = api._first_ranked(problem, built.bases, *statistics, {})
        assert picked is not None and picked.member.index == first.member.index
