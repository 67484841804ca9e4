"""The asymptotic stage of the autoscheduler (docs/autoscheduling-asymptotic.md): for the
paper's six kernels (Ahrens et al., PLDI 2022 §5, formats as there: first mode dense, the rest
compressed; vectors dense), every frontier member, run as the kernels it lowers to, computes
what ``np.einsum`` computes, on both engines; random product statements over random formats
likewise; the report names for each dominated candidate the member that dominates it."""

import re
import time

import numpy as np
import pytest

import coiter as ct
from coiter.autosched import frontier
from coiter.autosched.candidates import Problem, frontier_bases
from compiler_cases import ENGINES

RNG_SEED = 7

# name: (statement, formats, einsum subscripts)
KERNELS = {
    "SpMV": ("a(i) = B(i,j) * c(j)", {"B": "ds"}, "ij,j->i"),
    "SpMV2": ("a(i) = B(i,j) * C(j,k) * d(k)", {"B": "ds", "C": "ds"}, "ij,jk,k->i"),
    "SpGEMM": ("A(i,j) = B(i,k) * C(k,j)", {"A": "ds", "B": "ds", "C": "ds"}, "ik,kj->ij"),
    "SpGEMM2": (
        "A(i,j) = B(i,k) * C(k,l) * D(l,j)",
        {"A": "ds", "B": "ds", "C": "ds", "D": "ds"},
        "ik,kl,lj->ij",
    ),
    "SpGEMMH": (
        "A(i,j) = B(i,k) * C(k,j) * D(k,j)",
        {"A": "ds", "B": "ds", "C": "ds", "D": "ds"},
        "ik,kj,kj->ij",
    ),
    "SpMTTKRP": (
        "A(i,j) = B(i,k,l) * C(k,j) * D(l,j)",
        {"A": "ds", "B": "dss", "C": "ds", "D": "ds"},
        "ikl,kj,lj->ij",
    ),
}


def operands_for(statement, subscripts, formats, seed):
    """Random operands with distinct extents per index variable (a transposed read or a
    workspace over the wrong variable then fails loudly), sparse ones at density 0.3."""
    rng = np.random.default_rng(seed)
    inputs = subscripts.split("->")[0].split(",")
    names = re.findall(r"(\w+)\(", statement.split("=")[1])
    extent = {v: 5 + k for k, v in enumerate(sorted(set("".join(inputs))))}
    arrays = {}
    for name, sub in zip(names, inputs, strict=True):
        shape = tuple(extent[v] for v in sub)
        dense = rng.random(shape)
        if set(formats.get(name, "d")) != {"d"}:
            dense = dense * (rng.random(shape) < 0.3)
        arrays[name] = dense
    return arrays, [arrays[n] for n in names]


def dense_of(result):
    return result.todense() if hasattr(result, "todense") else np.asarray(result)


def check_members(statement, formats, subscripts, seed):
    start = time.perf_counter()
    f = frontier(statement, formats=formats)
    # The limit is 10 s on one core; the largest (SpMTTKRP) takes about 0.5 s.
    assert time.perf_counter() - start < 10.0
    assert f.members, f.report()
    arrays, ordered = operands_for(statement, subscripts, formats, seed)
    expected = np.einsum(subscripts, *ordered)
    for member in f.members:
        assert member.lowered and member.on_frontier
        for engine in ENGINES:
            result = member.evaluate(engine=engine, **arrays)
            assert result.format == f.result_format, member.program
            got = dense_of(result)
            np.testing.assert_allclose(
                got, expected, rtol=1e-12, atol=1e-12, err_msg=f"{engine}: {member.program}"
            )
    check_empirical_bases(statement, formats, arrays, expected, f)
    return f


def check_empirical_bases(statement, formats, arrays, expected, f):
    """Every frontier member as the empirical stage takes it (candidates.frontier_bases: one
    schedule of the statement on converted operands, else the pipeline of its kernels), run
    the way ct.autoschedule and schedule="auto" run it, computes what np.einsum computes."""
    problem = Problem.of(statement, formats)
    bases, why_not = frontier_bases(problem)
    assert why_not is None
    assert [b.member.index for b in bases] == [m.index for m in f.members]
    for base in bases:
        for engine in ENGINES:
            if base.candidate is None:
                assert not base.conversions
                result = base.member.pipeline(engine)(**arrays)
            else:
                assert base.candidate.origin == f"frontier #{base.member.index}"
                assert (
                    problem.with_formats(base.conversions).legality(base.candidate.schedule) is None
                )
                kern = ct.compile(
                    statement,
                    formats=dict(problem.formats, **base.conversions),
                    schedule=base.candidate.schedule,
                    engine=engine,
                )
                given = {n: ct.asarray(a, format=problem.formats[n]) for n, a in arrays.items()}
                converted = {
                    n: t.asformat(base.conversions[n]) if n in base.conversions else t
                    for n, t in given.items()
                }
                result = kern(**converted)
            assert result.format == problem.formats[problem.result]
            np.testing.assert_allclose(
                dense_of(result),
                expected,
                rtol=1e-12,
                atol=1e-12,
                err_msg=f"{engine}: {base.member.program}",
            )


@pytest.mark.parametrize("kernel", sorted(KERNELS))
def test_paper_kernels_frontier_members_compute_einsum(kernel):
    statement, formats, subscripts = KERNELS[kernel]
    check_members(statement, formats, subscripts, RNG_SEED)


def test_spgemm_frontier_keeps_gustavson_and_drops_inner_products():
    f = frontier("A(i,j) = B(i,k) * C(k,j)", formats=KERNELS["SpGEMM"][1])
    by_program = {c.program: c for c in f.candidates}
    gustavson = by_program["∀i ∀k ∀j A(i,j) = B(l(i),w(k)) * C(l(k),w(j))"]
    inner = by_program["∀i ∀j ∀k A(i,j) = B(l(i),w(k)) * C(l(j),w(k))"]
    assert gustavson.on_frontier
    assert gustavson.stages[0].schedule == "reorder(i,k,j)"
    assert not inner.on_frontier
    assert inner.dominated_by is not None and inner.dominated_by.on_frontier
    # The inner products read C transposed: its kernel takes C as CSC.
    assert inner.stages[0].formats["C"] == "ds:1,0"
    report = f.report()
    assert f"#{inner.index} " in report
    assert f"dominated by #{inner.dominated_by.index}" in report


def test_spmv2_frontier_has_the_two_pass_program():
    f = frontier(KERNELS["SpMV2"][0], formats=KERNELS["SpMV2"][1])
    assert f.minimum_depth == 2
    two_pass = [m for m in f.members if len(m.stages) == 2]
    assert two_pass, f.report()
    # The first kernel computes the workspace C·d, the second reads it.
    first, second = two_pass[0].stages
    assert first.result == "w" and "w(" in second.statement


# Input formats of the random statements: dense, compressed and hashed levels, and stored mode
# orders other than the statement's (CSC, DCSC).
FORMATS_BY_ORDER = {1: ["d", "s", "h"], 2: ["dd", "ds", "ss", "dh", "ds:1,0", "ss:1,0"]}


@pytest.mark.parametrize("seed", range(8))
def test_random_products_frontier_members_compute_einsum(seed):
    rng = np.random.default_rng(100 + seed)
    variables = "ijkl"
    factors = int(rng.integers(2, 4))
    terms, subscripts, formats = [], [], {}
    for n in range(factors):
        order = int(rng.integers(1, 3))
        sub = "".join(rng.choice(list(variables[:3]), size=order, replace=False))
        name = "T" + str(n)
        terms.append(f"{name}({','.join(sub)})")
        subscripts.append(sub)
        formats[name] = str(rng.choice(FORMATS_BY_ORDER[order]))
    used = sorted(set("".join(subscripts)))
    out = "".join(v for v in used if rng.random() < 0.5)
    out_sub = ",".join(out)
    statement = f"R({out_sub}) = " + " * ".join(terms) if out else "R = " + " * ".join(terms)
    if out:
        formats["R"] = "d" * len(out)
    check_members(statement, formats, ",".join(subscripts) + "->" + out, seed)


def test_sddmm_frontier_members_compute_einsum_and_the_unfused_product_is_dominated():
    statement = "A(i,j) = B(i,j) * C(i,k) * D(k,j)"
    f = check_members(statement, {"A": "csr", "B": "csr"}, "ij,ik,kj->ij", 11)
    # Computing C·D first into a dense matrix visits every (i, j, k): dominated.
    unfused = [c for c in f.candidates if "w(i,j) = C(l(i),l(k)) * D(l(k),l(j))" in c.program]
    assert unfused and all(c.dominated_by is not None for c in unfused if c.lowered)
    assert any("precompute(" in m.schedule for m in f.members)


def test_list_workspace_merged_with_a_sparse_operand():
    # The consumer coiterates x with the compressed or hashed list of w = A·y: lowering used
    # to leave an empty branch where it clears a dense workspace's entry, and crashed.
    f = check_members("s = x(i) * A(i,j) * y(j)", {"A": "csr", "x": "s"}, "i,ij,j->", 13)
    merged = [m for m in f.members if re.search(r"x\(w\(i\)\) \* w\(w\(i\)\)", m.program)]
    assert any(m.program.endswith("[w: s]") for m in merged)
    assert any(m.program.endswith("[w: h]") for m in merged)


def test_evaluate_names_what_is_missing():
    f = frontier(KERNELS["SpMV"][0], formats=KERNELS["SpMV"][1])
    with pytest.raises(ValueError, match="no operand named 'c'"):
        f.members[0].evaluate(B=np.eye(3))
    spgemm = frontier(KERNELS["SpGEMM"][0], formats=KERNELS["SpGEMM"][1])
    unlowered = next(c for c in spgemm.candidates if not c.lowered)
    with pytest.raises(ValueError, match="does not lower"):
        unlowered.evaluate(B=np.eye(3), C=np.eye(3))


def test_unsupported_statements_are_refused():
    with pytest.raises(ValueError, match="applies 'add'"):
        frontier("a(i) = B(i,j) * c(j) + d(i)", formats={"B": "csr"})


def test_report_lists_every_dominated_candidate_with_its_dominator():
    f = frontier(KERNELS["SpGEMMH"][0], formats=KERNELS["SpGEMMH"][1])
    report = f.report(all=True)
    for c in f.candidates:
        assert f"#{c.index} " in report
        if c.lowered and not c.on_frontier:
            assert c.dominated_by is not None and c.dominated_by.on_frontier
        if not c.lowered:
            assert c.problem


def test_a_pipeline_runs_again_on_operands_of_other_extents():
    """A two-kernel member's pipeline, compiled once, on SpMV2 operands of two sizes: the
    result (and the result shape ct.evaluate checks before the call) follows the operands."""
    statement, formats, subscripts = KERNELS["SpMV2"]
    f = frontier(statement, formats=formats)
    member = next(m for m in f.members if len(m.stages) == 2)
    pipeline = member.pipeline()
    rng = np.random.default_rng(RNG_SEED)
    for rows, inner, cols in ((5, 7, 6), (11, 4, 9)):
        B = rng.random((rows, inner)) * (rng.random((rows, inner)) < 0.4)
        C = rng.random((inner, cols)) * (rng.random((inner, cols)) < 0.4)
        d = rng.random(cols)
        operands = {
            "B": ct.asarray(B, format="ds"),
            "C": ct.asarray(C, format="ds"),
            "d": ct.asarray(d),
        }
        assert pipeline._result_shape(operands, None) == [rows]
        np.testing.assert_allclose(
            dense_of(pipeline(**operands)), np.einsum(subscripts, B, C, d), rtol=1e-12
        )
