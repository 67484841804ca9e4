"""schedule="auto" as the default (issue 18, API.md §5): ct.evaluate, ct.einsum, ct.compile and
the array operators without a schedule ask the autoscheduler on the CPU; schedule="default"
spells the compiler's default schedule; the choice's per-call cost (operand statistics
remembered per tensor storage) and when it reads the operands again."""

import os

import numpy as np
import pytest
import scipy.sparse as sp

import coiter as ct
import coiter.autosched.database as tuning_database
from coiter.auto_keys import _kept_statistics
from coiter.autosched import api, frontier_cache
from coiter.autosched.api import instant_choice
from coiter.autosched.database import (
    EXTENTS,
    ROW_MEAN,
    Entry,
    bucket_of,
    database,
    operand_statistics,
    signature,
    tensor_bucket,
    tensor_statistics,
)
from coiter.compiler import default_engine, is_auto
from coiter.evaluate import _chosen_kernels
from coiter.parser import parse

YYT = "C(i,j) = A(i,t) * B(j,t)"  # einsum("it,jt->ij", Y, Y): an inner product by default


def _yyt_operands():
    return sp.random(400, 100, density=0.02, format="csr", random_state=3)


def _choices_of(statement):
    """ct.evaluate's remembered choices of a statement: (kernel schedule, conversions)."""
    return [
        (chosen[0]._schedule, chosen[4])
        for key, chosen in _chosen_kernels.items()
        if key[0] == statement
    ]


def test_evaluate_without_a_schedule_is_auto(tuning_dir):
    # Without a tuning, auto converts B to CSC for YYt (a row-by-row product instead of an
    # intersection per result entry); the call without schedule= makes the same choice as
    # schedule="auto" (a product of two operands: the frontier is built for both).
    ct.clear_cache()
    Y = _yyt_operands()
    before = ct.tuning_info()["frontier_choices"]
    C = ct.evaluate(YYT, A=Y, B=Y)
    assert ct.tuning_info()["frontier_choices"] == before + 1
    np.testing.assert_allclose(C.to_scipy().toarray(), (Y @ Y.T).toarray(), rtol=1e-12)
    [(schedule, conversions)] = _choices_of(YYT)
    assert list(conversions) == ["B"] and list(conversions["B"].mode_order) == [1, 0]
    ct.evaluate(YYT, schedule="auto", A=Y, B=Y)
    assert ct.tuning_info()["frontier_choices"] == before + 2
    assert _choices_of(YYT) == [(schedule, conversions)] * 2


def test_einsum_and_operators_without_a_schedule_are_auto(tuning_dir):
    Y = _yyt_operands()
    before = ct.tuning_info()["frontier_choices"]
    np.testing.assert_allclose(
        ct.einsum("it,jt->ij", Y, Y).to_scipy().toarray(), (Y @ Y.T).toarray(), rtol=1e-12
    )
    assert ct.tuning_info()["frontier_choices"] == before + 1
    # The operators choose as auto does, and make the conversions it asks for (B.T is CSC
    # of B, which auto reads in another order), remembering the choice by the statistics.
    T = ct.asarray(Y)
    for _ in range(2):
        np.testing.assert_allclose((T @ T.T).to_numpy(), (Y @ Y.T).toarray(), rtol=1e-12)
    small = ct.asarray(sp.random(40, 10, density=0.2, format="csr", random_state=4))
    np.testing.assert_allclose(
        (small @ small.T).to_numpy(), (small.to_scipy() @ small.to_scipy().T).toarray()
    )


def test_the_default_spelling_is_the_compilers_schedule(tuning_dir):
    Y = _yyt_operands()
    before = ct.tuning_info()
    C = ct.evaluate(YYT, schedule="default", A=Y, B=Y)
    after = ct.tuning_info()
    assert (after["frontier_choices"], after["rule_choices"]) == (
        before["frontier_choices"],
        before["rule_choices"],
    )
    np.testing.assert_allclose(C.to_scipy().toarray(), (Y @ Y.T).toarray(), rtol=1e-12)
    formats = {"A": "csr", "B": "csr", "C": "csr"}
    default = ct.compile(YYT, formats=formats, schedule="default")
    assert default.concrete == ct.compile(YYT, formats=formats, schedule=ct.Schedule()).concrete
    assert default.concrete == ct.compile(YYT, formats=formats, schedule="").concrete
    assert "∀i ∀j" in default.concrete  # the inner product: one result entry at a time
    A, B = ct.asarray(Y, name="A"), ct.asarray(Y, name="B")
    i, j, t = ct.indices("i j t")
    C = ct.zeros((400, 400), format="csr", name="C")
    C[i, j] = A[i, t] * B[j, t]
    assert C.schedule("default") is C
    np.testing.assert_allclose(C.to_numpy(), (Y @ Y.T).toarray(), rtol=1e-12)
    with pytest.raises(ct.ScheduleError, match="'default'"):
        C.schedule("auto")  # (chosen by ct.compile and ct.evaluate, not a schedule's text)


def test_only_the_cpu_target_defaults_to_auto():
    # A GPU kernel without a schedule keeps the GPU's default schedules (docs/gpu.md).
    assert is_auto(None) and is_auto(None, "cpu") and is_auto(" auto ", "cuda")
    assert not is_auto(None, "cuda")
    assert not is_auto("default") and not is_auto("") and not is_auto(ct.Schedule())


def test_statistics_are_read_once_per_storage():
    A = ct.asarray(sp.random(300, 200, density=0.05, format="csr", random_state=0))
    light = tensor_bucket(A, EXTENTS)
    assert light == ((8, 8), 12)  # log2 of the extents and of the 3000 nonzeros
    assert A._statistics.read.depth == EXTENTS  # (the rows were not read)
    assert tensor_bucket(A, ROW_MEAN) == ((8, 8), 12, 3)  # 10 a row
    full = tensor_statistics(A)
    assert full["max_row"] == int(np.diff(A.to_scipy().indptr).max())
    assert full["mean_row"] == 10.0
    assert tensor_statistics(A) is full and tensor_bucket(A, EXTENTS) is light
    assert tensor_bucket(A)[:3] == tensor_bucket(A, ROW_MEAN) and len(tensor_bucket(A)) == 4
    # A kernel writing A with out= replaces its storage (of the same structure), and so does
    # a new definition (of another): the statistics are read again.
    doubled = ct.compile("B(i,j) = 2 * A(i,j)", formats={"A": "csr", "B": "csr"})
    doubled(A=A.copy(), out=A)
    again = tensor_statistics(A)
    assert again is not full and again == full
    X = ct.asarray(sp.random(300, 200, density=0.2, format="csr", random_state=1))
    i, j = ct.indices("i j")
    A[i, j] = 2 * X[i, j]
    assert tensor_statistics(A)["nnz"] == X.nnz != full["nnz"]
    dense = ct.asarray(np.ones((3, 4)))
    assert tensor_statistics(dense) == {"shape": [3, 4], "nnz": 12}


def test_a_scipy_operand_passed_again_is_read_once(tuning_dir, monkeypatch):
    # ct.evaluate wraps SciPy matrices and NumPy arrays anew on every call: their statistics
    # are kept for the array they were read from (a matrix's indptr), so the mean row length
    # that a tuning of the statement asks for is read by the first call only.
    # (Its own statement: this process remembers which statements are tuned across cache
    # directories until its database changes.)
    stmt = "y(i) = M(i,j) * v(j)"
    A = sp.random_array((300, 200), density=0.05, format="csr", random_state=0)
    x = np.random.default_rng(0).random(200)
    ct.autoschedule(stmt, budget=0.2, conversions=False, M=A, v=x)
    reads = []
    real = tuning_database._remembered

    def spy(tensor, depth):
        reads.append((tensor.name, depth))
        return real(tensor, depth)

    monkeypatch.setattr(tuning_database, "_remembered", spy)
    keys = []
    real_key = instant_choice.input_key

    def key_spy(stmt, operands):
        keys.append(real_key(stmt, operands))
        return keys[-1]

    monkeypatch.setattr(instant_choice, "input_key", key_spy)

    def call(matrix, vector=x):
        y = ct.evaluate(stmt, M=matrix, v=vector)
        np.testing.assert_allclose(y.to_numpy(), matrix @ vector, rtol=1e-12)
        return _kept_statistics[id(matrix.indptr)].read.values

    assert call(A) == {"shape": [300, 200], "nnz": A.nnz, "mean_row": A.nnz / 300}
    assert ("M", ROW_MEAN) in reads and ("v", ROW_MEAN) in reads
    reads.clear()
    for _ in range(2):
        call(A)
    # (Nor is the key asked for again: it depends on nothing else while the database stays.)
    assert reads == [] and len(keys) == 1
    # Another matrix is read, however alike (the same extents and density, a copy), and so
    # is one sharing A's indptr with other extents (kept in A's place).
    B = sp.random_array((300, 200), density=0.05, format="csr", random_state=1)
    assert call(B) == {"shape": [300, 200], "nnz": B.nnz, "mean_row": B.nnz / 300}
    assert reads == [("M", ROW_MEAN)]
    assert call(A.copy())["nnz"] == A.nnz and len(reads) == 2
    wider = sp.csr_array((A.data, A.indices, A.indptr), shape=(300, 400))
    assert wider.indptr is A.indptr
    assert call(wider, np.ones(400))["shape"] == [300, 400]
    assert ("M", ROW_MEAN) in reads[2:] and ("v", ROW_MEAN) in reads[2:]
    reads.clear()
    assert call(A)["shape"] == [300, 200] and reads == [("M", ROW_MEAN)]
    # A Tensor remembers its statistics for its storage: its key is asked for once too, and
    # again once its storage is replaced (out=).
    T, asked = ct.asarray(A), len(keys)
    for _ in range(2):
        np.testing.assert_allclose(ct.evaluate(stmt, M=T, v=x).to_numpy(), A @ x, rtol=1e-12)
    assert len(keys) == asked + 1
    ct.compile("B(i,j) = 2 * A(i,j)", formats={"A": "csr", "B": "csr"})(A=T.copy(), out=T)
    np.testing.assert_allclose(ct.evaluate(stmt, M=T, v=x).to_numpy(), 2 * A @ x, rtol=1e-12)
    assert len(keys) == asked + 2
    # A change of the database forgets the keys: untuned, they read extents and nonzeros.
    before = len(keys)
    ct.clear_tuning()
    call(A)
    assert len(keys) == before + 1 and dict(keys[-1][0])["M"] == ((8, 8), 12)
    # A matrix is forgotten with its indptr.
    kept = len(_kept_statistics)
    del B
    assert len(_kept_statistics) == kept - 1


@pytest.mark.parametrize("caller", ["einsum", "operator", "ufunc"])
def test_einsum_and_the_array_operators_read_a_scipy_operand_once(caller, tuning_dir, monkeypatch):
    # ct.einsum and the array operators wrap SciPy and NumPy operands anew on every call too:
    # they take the statistics kept for the array as ct.evaluate does, and the key they
    # computed from them.
    A = sp.random_array((300, 200), density=0.05, format="csr", random_state=3)
    B = sp.random_array((300, 200), density=0.05, format="csr", random_state=4)
    x = np.random.default_rng(4).random(200)
    T = ct.asarray(B)
    call, expected = {
        "einsum": (lambda: ct.einsum("ij,j->i", A, x), lambda: A @ x),
        "operator": (lambda: (T + A).evaluate(), lambda: (B + A).toarray()),
        "ufunc": (lambda: np.multiply(T, A).evaluate(), lambda: B.multiply(A).toarray()),
    }[caller]
    # (Twice: the first call's choice reads T's rows further, so the second computes the key
    # of T's statistics once more.)
    for _ in range(2):
        np.testing.assert_allclose(call().to_numpy(), expected(), rtol=1e-12)
    reads, keys = [], []
    real_read, real_key = tuning_database._remembered, instant_choice.input_key
    monkeypatch.setattr(
        tuning_database, "_remembered", lambda t, depth: reads.append(t) or real_read(t, depth)
    )
    monkeypatch.setattr(
        instant_choice, "input_key", lambda stmt, ops: keys.append(1) or real_key(stmt, ops)
    )
    for _ in range(3):
        np.testing.assert_allclose(call().to_numpy(), expected(), rtol=1e-12)
    assert reads == [] and keys == []
    # Another matrix of the same extents is read, once.
    A = sp.random_array((300, 200), density=0.05, format="csr", random_state=5)
    for _ in range(2):
        np.testing.assert_allclose(call().to_numpy(), expected(), rtol=1e-12)
    assert len(reads) == 1 and len(keys) == 1


def test_a_choice_remembered_under_one_cache_directory_is_not_used_under_another(
    tmp_path, monkeypatch
):
    # Each cache directory holds its own tuning database: the choice made with one, and the
    # key it is remembered by, must not serve a call once COITER_CACHE_DIR names another.
    stmt = "y(i) = G(i,j) * u(j)"
    A = sp.random_array((300, 200), density=0.05, format="csr", random_state=6)
    x = np.random.default_rng(6).random(200)
    problem, tensors = api._prepare(stmt, None, {"G": A, "u": x})
    key = signature(problem, default_engine(), ct.get_num_threads())
    statistics = operand_statistics(tensors)
    tuned = {"first": "split(i,i0,i1,16)", "second": "split(i,i0,i1,64)"}
    for directory, schedule in tuned.items():
        monkeypatch.setenv("COITER_CACHE_DIR", str(tmp_path / directory))
        database.store(Entry(key, bucket_of(statistics), schedule, {}, 1.0, 2.0, 0.1, statistics))
    chosen = []
    real = instant_choice.for_operands

    def spy(*args, **kwargs):
        chosen.append(real(*args, **kwargs)[0])
        return chosen[-1], {}

    monkeypatch.setattr(instant_choice, "for_operands", spy)
    for directory in ["first", "first", "second", "second", "first"]:
        monkeypatch.setenv("COITER_CACHE_DIR", str(tmp_path / directory))
        np.testing.assert_allclose(ct.evaluate(stmt, G=A, u=x).to_numpy(), A @ x, rtol=1e-12)
    assert chosen == [tuned["first"], tuned["second"]]
    # A third directory, without a database: the untuned choice.
    monkeypatch.setenv("COITER_CACHE_DIR", str(tmp_path / "third"))
    np.testing.assert_allclose(ct.evaluate(stmt, G=A, u=x).to_numpy(), A @ x, rtol=1e-12)
    assert len(chosen) == 3 and chosen[2] not in tuned.values()


def test_an_operand_converted_for_auto_is_converted_once_a_call(tuning_dir, monkeypatch):
    # Auto converts B to CSC for YYt: the first call (which chooses the kernel) converts it
    # once, as the calls after it do.
    ct.clear_cache()
    Y = _yyt_operands()
    conversions = []
    real = ct.Tensor.asformat

    def spy(tensor, *args, **kwargs):
        conversions.append(tensor.name)
        return real(tensor, *args, **kwargs)

    monkeypatch.setattr(ct.Tensor, "asformat", spy)
    for _ in range(2):
        C = ct.evaluate(YYT, A=Y, B=Y)
        assert conversions == ["B"]
        conversions.clear()
        np.testing.assert_allclose(C.to_scipy().toarray(), (Y @ Y.T).toarray(), rtol=1e-12)
        conversions.clear()  # (to_scipy's)


def test_the_row_lengths_key_choices_only_as_far_as_the_tunings_tell_them_apart(tuning_dir):
    # The maximum row length reads every row on every call: untuned, the key has extents and
    # nonzeros only; tuned, also the mean row length (the nearest tuning's distance); the
    # row skew only once two tunings differ in it alone (the exact bucket's lookup).
    stmt = "y(i) = A(i,j) * x(j)"
    A = sp.random(300, 200, density=0.05, format="csr", random_state=0)
    x = np.random.default_rng(0).random(200)
    operands = {"A": ct.asarray(A), "x": ct.asarray(x)}
    parsed = parse(stmt)
    untuned, _ = instant_choice.input_key(parsed, operands)
    assert dict(untuned)["A"] == ((8, 8), 12)
    ct.autoschedule(stmt, budget=0.2, conversions=False, A=A, x=x)
    tuned, _ = instant_choice.input_key(parsed, operands)
    assert dict(tuned)["A"] == ((8, 8), 12, 3)
    # A second tuning of the same signature whose bucket differs in the skew only.
    [entry] = database.entries()
    statistics = operand_statistics(operands)
    skewed = dict(statistics, A=dict(statistics["A"], max_row=100 * statistics["A"]["max_row"]))
    assert bucket_of(skewed) != entry.bucket
    database.store(Entry(entry.signature, bucket_of(skewed), "", {}, 1.0, 1.0, 0.1, skewed))
    both, _ = instant_choice.input_key(parsed, operands)
    assert dict(both)["A"][:3] == ((8, 8), 12, 3) and len(dict(both)["A"]) == 4
    np.testing.assert_allclose(ct.evaluate(stmt, **operands).to_numpy(), A @ x, rtol=1e-12)


def test_the_default_builds_the_frontier_of_three_operands(tuning_dir):
    # MTTKRP's frontier (2364 candidates, about 0.15 s) is built without a schedule too,
    # within ct.config.frontier_seconds, and kept in the disk cache; its members tie with the
    # default's program, so the default schedule runs, as it does with schedule="auto".
    rng = np.random.default_rng(0)
    B = ct.random((30, 20, 10), density=0.1, format="csf", seed=0)
    C, D = rng.random((20, 4)), rng.random((10, 4))
    stmt = "A(i,j) = B(i,k,l) * D(l,j) * C(k,j)"
    expected = np.einsum("ikl,lj,kj->ij", B.to_numpy(), D, C)
    before = ct.tuning_info()
    A = ct.evaluate(stmt, B=B, C=C, D=D)
    after = ct.tuning_info()
    assert after["frontier_choices"] == before["frontier_choices"] + 1
    assert after["rule_choices"] == before["rule_choices"]
    assert os.listdir(tuning_dir / frontier_cache.DIRECTORY)
    np.testing.assert_allclose(A.to_numpy(), expected, rtol=1e-12)
    A = ct.evaluate(stmt, schedule="auto", B=B, C=C, D=D)
    assert ct.tuning_info()["frontier_choices"] == before["frontier_choices"] + 2
    np.testing.assert_allclose(A.to_numpy(), expected, rtol=1e-12)
    formats = {"B": "csf"}
    assert ct.compile(stmt, formats=formats).concrete == (
        ct.compile(stmt, formats=formats, schedule="default").concrete
    )
