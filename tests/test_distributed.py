"""coiter.distributed (docs/distributed.md) on a Dask LocalCluster of worker processes: every
kernel of the issue against NumPy's dense result, for 1, 2 and 3 workers and several block
counts; splits of free and summed indices; partition balance; dask.array round trips; files
read in parallel; bad input; a worker killed in the middle of a run."""

import os
import signal
import time

import numpy as np
import pytest
import scipy.sparse as sp

import coiter as ct

distributed = pytest.importorskip("distributed")
import dask.array as da  # noqa: E402  (after the skip: dask comes with distributed)

from coiter.distributed.blocks import cut_blocks, join_blocks  # noqa: E402
from coiter.distributed.bounds import balanced_bounds, bounds_from_weights  # noqa: E402

WORKERS = 3


@pytest.fixture(scope="module")
def client():
    """One cluster for the module: three worker processes of one thread (the tests restrict
    work to one, two or three of them); the kernel disk cache is conftest's private one, which
    the workers inherit through the environment."""
    from dask.distributed import Client, LocalCluster

    cluster = LocalCluster(
        n_workers=WORKERS,
        threads_per_worker=1,
        processes=True,
        dashboard_address=":0",
        memory_limit="2GiB",
    )
    with Client(cluster) as c:
        c.wait_for_workers(WORKERS)
        yield c
    cluster.close()


@pytest.fixture
def addresses(client):
    # (Not client.scheduler_info(): its periodic refresh may empty the worker list it returns.)
    return sorted(client.run(os.getpid))


def _sparse(shape, density, fmt, seed):
    return ct.random(shape, density, format=fmt, seed=seed)


def _dense(shape, seed):
    return np.random.default_rng(seed).random(shape)


# name -> (statement, operands built from a seed, the operand partitioned along i, einsum of
# the reference)
def _kernels():
    return {
        "spmv": (
            "y(i) = A(i,j) * x(j)",
            lambda s: {"A": _sparse((60, 40), 0.1, "csr", s), "x": _dense(40, s)},
            "A",
            "ij,j->i",
        ),
        "spmm": (
            "Y(i,k) = A(i,j) * X(j,k)",
            lambda s: {"A": _sparse((60, 40), 0.1, "csr", s), "X": _dense((40, 5), s)},
            "A",
            "ij,jk->ik",
        ),
        "spgemm": (
            "C(i,j) = A(i,k) * B(k,j)",
            lambda s: {
                "A": _sparse((60, 40), 0.1, "csr", s),
                "B": _sparse((40, 30), 0.1, "csr", s + 1),
            },
            "A",
            "ik,kj->ij",
        ),
        "sddmm": (
            "C(i,j) = A(i,j) * U(i,k) * V(j,k)",
            lambda s: {
                "A": _sparse((60, 40), 0.1, "csr", s),
                "U": _dense((60, 4), s),
                "V": _dense((40, 4), s + 1),
            },
            "A",
            "ij,ik,jk->ij",
        ),
        "spadd": (
            "C(i,j) = A(i,j) + B(i,j)",
            lambda s: {
                "A": _sparse((60, 40), 0.1, "csr", s),
                "B": _sparse((60, 40), 0.1, "csr", s + 1),
            },
            "A",
            None,
        ),
        "ttm": (
            "A(i,j,k) = B(i,j,l) * C(k,l)",
            lambda s: {"B": _sparse((20, 12, 10), 0.05, "csf", s), "C": _dense((6, 10), s)},
            "B",
            "ijl,kl->ijk",
        ),
        "mttkrp": (
            "A(i,j) = B(i,k,l) * C(k,j) * D(l,j)",
            lambda s: {
                "B": _sparse((20, 12, 10), 0.05, "csf", s),
                "C": _dense((12, 4), s),
                "D": _dense((10, 4), s + 1),
            },
            "B",
            "ikl,kj,lj->ij",
        ),
    }


KERNELS = _kernels()


def _reference(name, operands):
    statement, _, _, subscripts = KERNELS[name]
    dense = {k: (v.to_numpy() if isinstance(v, ct.Tensor) else v) for k, v in operands.items()}
    if subscripts is None:
        return dense["A"] + dense["B"]
    return np.einsum(subscripts, *dense.values())


def _local(name, operands):
    """The single-process result (its format is the distributed result's)."""
    return ct.evaluate(KERNELS[name][0], **operands)


@pytest.mark.parametrize("name", sorted(KERNELS))
@pytest.mark.parametrize("workers,parts", [(1, 2), (2, 2), (2, 5), (3, 3), (3, 7)])
def test_kernel_split_along_a_free_index(client, addresses, name, workers, parts):
    statement, build, partitioned, _ = KERNELS[name]
    operands = build(parts)
    chosen = addresses[:workers]
    given = dict(operands)
    given[partitioned] = ct.distributed.partition(
        operands[partitioned], parts=parts, workers=chosen
    )
    result = ct.distributed.evaluate(statement, workers=chosen, **given)
    local = _local(name, operands)
    assert result.mode == 0 and result.bounds == given[partitioned].bounds
    assert (
        result.format == local.format
        and result.dtype == local.dtype
        and result.shape == local.shape
    )
    gathered = result.compute()
    assert gathered.format == local.format
    np.testing.assert_allclose(
        gathered.to_numpy(), _reference(name, operands), rtol=1e-12, atol=1e-12
    )


# name -> (the summed index split, {operand: mode cut along it})
SUMMED = {
    "spmv": ("j", {"A": 1, "x": 0}),
    "spmm": ("j", {"A": 1, "X": 0}),
    "spgemm": ("k", {"A": 1, "B": 0}),
    "ttm": ("l", {"B": 2, "C": 1}),
    "mttkrp": ("k", {"B": 1, "C": 0}),
}


@pytest.mark.parametrize("name", sorted(SUMMED))
@pytest.mark.parametrize("reduce", ["tree", "serial"])
def test_kernel_split_along_a_summed_index(client, name, reduce):
    statement, build, _, _ = KERNELS[name]
    var, cut = SUMMED[name]
    operands = build(7)
    given = dict(operands)
    first = next(iter(cut))
    given[first] = ct.distributed.partition(operands[first], mode=cut[first], parts=3)
    for other, mode in list(cut.items())[1:]:
        given[other] = ct.distributed.partition(
            operands[other], mode=mode, bounds=given[first].bounds
        )
    result = ct.distributed.evaluate(
        statement, schedule=ct.Schedule().distribute(var, reduce=reduce), **given
    )
    assert result.mode is None
    local = _local(name, operands)
    gathered = result.compute()
    assert gathered.format == local.format
    np.testing.assert_allclose(
        gathered.to_numpy(), _reference(name, operands), rtol=1e-12, atol=1e-12
    )


def test_summed_index_of_local_operands_cut_on_the_fly(client):
    a = _sparse((50, 80), 0.1, "csr", 3)
    x = _dense(80, 3)
    s = ct.Schedule.parse("distribute(j,4,bytes)")
    y = ct.distributed.evaluate("y(i) = A(i,j) * x(j)", schedule=s, A=a, x=x, gather=True)
    np.testing.assert_allclose(y.to_numpy(), a.to_numpy() @ x)
    dot = ct.distributed.evaluate("s = x(i) * x(i)", schedule="distribute(i,3)", x=x, gather=True)
    assert float(dot) == pytest.approx(x @ x)


def test_max_over_a_split_index_combines_by_max(client):
    a = ct.asarray(
        -_sparse((30, 40), 0.2, "csr", 4).to_numpy(), format="csr"
    )  # rows of negative entries
    result = ct.distributed.evaluate(
        "m(i) = max(j, A(i,j))", schedule="distribute(j,3)", A=a, gather=True
    )
    np.testing.assert_allclose(
        result.to_numpy(), a.to_numpy().max(axis=1)
    )  # the unstored zeros count


def test_local_operands_indexed_by_the_split_index_are_cut_conformally(client):
    a, b = _sparse((40, 30), 0.2, "csr", 5), _sparse((40, 30), 0.2, "coo", 6)
    c = ct.distributed.evaluate(
        "C(i,j) = A(i,j) * B(i,j) + A(i,j)", schedule="distribute(i,3,coords)", A=a, B=b
    )
    assert c.bounds == (0, 13, 26, 40)
    np.testing.assert_allclose(c.compute().to_numpy(), a.to_numpy() * b.to_numpy() + a.to_numpy())


def test_results_chain_partitioned_and_whole(client):
    a = _sparse((50, 50), 0.1, "csr", 8)
    x = _dense(50, 8)
    A = ct.distributed.partition(a, parts=3)
    y = A @ x  # partitioned like A
    z = ct.distributed.evaluate("z(i) = A(i,j) * y(j)", A=A, y=y.compute())
    np.testing.assert_allclose(z.compute().to_numpy(), a.to_numpy() @ (a.to_numpy() @ x))
    whole = ct.distributed.put(x)  # a replicated operand held on the cluster
    w = ct.distributed.evaluate("w(i) = A(i,j) * x(j)", A=A, x=whole)
    np.testing.assert_allclose(w.compute().to_numpy(), a.to_numpy() @ x)
    # a whole tensor indexed by the split index is cut on the workers
    v = ct.distributed.evaluate(
        "v(i) = A(i,j) * x(j) * u(i)", A=A, x=whole, u=ct.distributed.put(x)
    )
    np.testing.assert_allclose(v.compute().to_numpy(), (a.to_numpy() @ x) * x)


def test_einsum_and_gather(client):
    a = _sparse((30, 20), 0.2, "csr", 9)
    b = _dense((20, 3), 9)
    out = ct.distributed.einsum("ij,jk->ik", ct.distributed.partition(a, parts=2), b, gather=True)
    assert isinstance(out, ct.Tensor)
    np.testing.assert_allclose(out.to_numpy(), a.to_numpy() @ b)


def test_owner_computes(client):
    a = _sparse((80, 60), 0.1, "csr", 10)
    A = ct.distributed.partition(a, parts=4)
    y = ct.distributed.evaluate("y(i) = A(i,j) * x(j)", A=A, x=_dense(60, 10)).persist()
    who = client.who_has(y.blocks)
    assert y.placement == A.placement
    assert [list(who[f.key]) for f in y.blocks] == [[w] for w in A.placement]


def test_one_kernel_compiled_once_per_worker_from_the_shared_disk_cache(client):
    before = client.run(ct.cache_info)
    a = ct.asarray(_sparse((40, 40), 0.2, "csr", 11).to_numpy().astype(np.float32), format="csc")
    y = ct.distributed.evaluate(
        "q(j) = A(i,j) * z(i) * 3",
        schedule="distribute(j,6)",
        A=a,
        z=_dense(40, 11).astype(np.float32),
    )
    y.persist()
    after = client.run(ct.cache_info)
    for address in after:
        compiled = after[address]["compiles"] - before[address]["compiles"]
        loaded = after[address]["disk_hits"] - before[address]["disk_hits"]
        assert compiled == 0 and loaded <= 1, (address, before[address], after[address])


# -- partitions --------------------------------------------------------------------------


def _skewed(seed, n=400):
    rng = np.random.default_rng(seed)
    per_row = np.minimum((rng.pareto(1.2, n) * 3).astype(int) + 1, n)
    rows = np.repeat(np.arange(n), per_row)
    cols = np.concatenate([rng.choice(n, k, replace=False) for k in per_row])
    return ct.from_coords(
        np.column_stack([rows, cols]), rng.random(len(rows)), (n, n), format="csr"
    )


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("parts", [1, 2, 3, 8])
def test_balance_by_nnz_and_bytes(seed, parts):
    t = _skewed(seed)
    per_row = np.diff(t.levels[1].pos)
    for balance, weight in (("nnz", per_row), ("bytes", per_row * 12 + 4)):
        bounds = balanced_bounds(t, 0, parts, balance)
        assert bounds[0] == 0 and bounds[-1] == t.shape[0] and len(bounds) == parts + 1
        assert all(lo < hi for lo, hi in zip(bounds[:-1], bounds[1:]))
        blocks = [int(weight[lo:hi].sum()) for lo, hi in zip(bounds[:-1], bounds[1:])]
        assert max(blocks) <= weight.sum() / parts + weight.max()
    coords = balanced_bounds(t, 0, parts, "coords")
    extents = np.diff(coords)
    assert extents.max() - extents.min() <= 1


def test_bounds_keep_a_coordinate_per_block():
    assert bounds_from_weights(np.array([0, 0, 100, 0, 0]), 5) == (0, 1, 2, 3, 4, 5)
    assert bounds_from_weights(np.zeros(6), 3) == (0, 2, 4, 6)


@pytest.mark.parametrize(
    "fmt,shape",
    [
        ("csr", (30, 20)),
        ("csc", (30, 20)),
        ("coo", (30, 20)),
        ("dcsr", (30, 20)),
        ("dense", (30, 20)),
        ("dh", (30, 20)),
        ("csf", (12, 10, 8)),
        ("uqq", (12, 10, 8)),
        (ct.Format.parse("sss:2,0,1"), (12, 10, 8)),
    ],
)
def test_blocks_cut_and_join_in_every_mode(fmt, shape):
    t = _sparse(shape, 0.15, fmt, 12)
    dense = t.to_numpy()
    for mode in range(len(shape)):
        bounds = balanced_bounds(t, mode, 3, "nnz")
        blocks = cut_blocks(t, mode, bounds)
        for block, lo, hi in zip(blocks, bounds[:-1], bounds[1:]):
            assert block.format == t.format
            np.testing.assert_array_equal(
                block.to_numpy(), np.take(dense, range(lo, hi), axis=mode)
            )
        joined = join_blocks(blocks, mode, bounds, shape, t.format)
        assert joined.format == t.format
        np.testing.assert_array_equal(joined.to_numpy(), dense)


def test_partition_places_blocks_round_robin(client, addresses):
    t = _skewed(1)
    A = ct.distributed.partition(t, parts=5, balance="bytes", name="A")
    assert A.parts == 5 and A.placement == [addresses[b % WORKERS] for b in range(5)]
    assert sum(A.block_nnz()) == t.nnz == A.nnz
    who = client.who_has(A.persist().blocks)
    assert [list(who[f.key]) for f in A.blocks] == [[w] for w in A.placement]
    again = ct.distributed.partition(A, mode=1, parts=2)  # gathered, cut along columns
    np.testing.assert_array_equal(again.compute().to_numpy(), t.to_numpy())
    scattered = ct.distributed.partition(t.to_scipy(), bounds=A.bounds, resilient=False)
    np.testing.assert_array_equal(scattered.compute().to_numpy(), t.to_numpy())


# -- dask.array ----------------------------------------------------------------------------


def test_dask_array_of_numpy_round_trip(client):
    array = _dense((40, 30), 13)
    x = da.from_array(array, chunks=(15, 30))
    t = ct.distributed.from_dask_array(x, name="X")
    assert t.mode == 0 and t.bounds == (0, 15, 30, 40) and t.format == ct.Format.parse("dd")
    np.testing.assert_array_equal(t.compute().to_numpy(), array)
    for kind, convert in (
        ("numpy", np.asarray),
        ("coiter", lambda c: c.to_numpy()),
        ("scipy", lambda c: c.toarray()),
    ):
        back = t.to_dask_array(kind).compute()
        np.testing.assert_array_equal(convert(back), array)
    y = ct.distributed.evaluate(
        "y(i) = X(i,j) * v(j)", X=x, v=_dense(30, 13)
    )  # a dask array as operand
    np.testing.assert_allclose(y.compute().to_numpy(), array @ _dense(30, 13))


def test_dask_array_of_scipy_and_pydata_chunks(client):
    sparse = pytest.importorskip("sparse")
    m = _sparse((40, 30), 0.2, "csr", 14).to_numpy()
    base = da.from_array(m, chunks=(10, 15))  # chunked along both axes: rechunked
    scipy_chunks = base.map_blocks(sp.csr_matrix, dtype=m.dtype, meta=sp.csr_matrix((0, 0)))
    t = ct.distributed.from_dask_array(scipy_chunks)
    assert t.format == ct.Format.parse("ds") and t.parts == 4
    np.testing.assert_array_equal(t.compute().to_numpy(), m)
    pydata = base.map_blocks(
        sparse.COO, dtype=m.dtype, meta=sparse.COO.from_numpy(np.zeros((0, 0)))
    )
    p = ct.distributed.from_dask_array(pydata, mode=1)
    assert p.mode == 1 and p.bounds == (0, 15, 30)
    np.testing.assert_array_equal(p.compute().to_numpy(), m)
    product = p.to_dask_array("sparse").T @ np.ones(40)  # what a Dask user does with it
    np.testing.assert_allclose(np.asarray(product.compute()), m.T @ np.ones(40))


# -- files ---------------------------------------------------------------------------------


@pytest.mark.parametrize("symmetry", ["general", "symmetric"])
def test_matrix_market_read_in_parallel(client, tmp_path, symmetry):
    m = _sparse((300, 300), 0.02, "csr", 15).to_numpy()
    if symmetry == "symmetric":
        m = m + m.T
    path = tmp_path / "m.mtx"
    ct.write(path, ct.asarray(m, format="coo"), symmetry=symmetry)
    t = ct.distributed.read(path, parts=3, pieces=4)
    local = ct.read(path)
    assert t.format == local.format and t.shape == local.shape and t.dtype == local.dtype
    np.testing.assert_array_equal(t.compute().to_numpy(), local.to_numpy())
    columns = ct.distributed.read(path, mode=1, parts=2, pieces=3, balance="coords", format="csc")
    np.testing.assert_array_equal(columns.compute().to_numpy(), m)


def test_frostt_read_in_parallel(client, tmp_path):
    t = _sparse((15, 9, 7), 0.1, "coo", 16)
    path = tmp_path / "t.tns"
    ct.write(path, t)
    read = ct.distributed.read(path, mode=2, parts=3, pieces=3, format="csf")
    assert read.shape == t.shape and read.format == ct.Format.parse("sss")
    np.testing.assert_array_equal(read.compute().to_numpy(), t.to_numpy())
    padded = ct.distributed.read(path, shape=(20, 9, 8), pieces=2)
    assert padded.shape == (20, 9, 8)


def test_compressed_and_dense_files_are_read_whole_then_cut(client, tmp_path):
    m = _sparse((40, 30), 0.1, "csr", 17)
    gz = tmp_path / "m.mtx.gz"
    ct.write(gz, m)
    np.testing.assert_array_equal(
        ct.distributed.read(gz, parts=3).compute().to_numpy(), m.to_numpy()
    )
    dense = tmp_path / "d.mtx"
    ct.write(dense, m.to_numpy())
    t = ct.distributed.read(dense, parts=2)
    assert t.format == ct.Format.parse("dd")
    np.testing.assert_array_equal(t.compute().to_numpy(), m.to_numpy())


def test_a_malformed_line_is_named_from_any_piece(client, tmp_path):
    lines = ["%%MatrixMarket matrix coordinate real general", "100 100 400"]
    lines += [f"{k % 100 + 1} {k * 7 % 100 + 1} {k}.5" for k in range(400)]
    lines[300] = "7 x 1.0"
    path = tmp_path / "bad.mtx"
    path.write_text("\n".join(lines) + "\n")
    with pytest.raises(ct.ParseError) as error:
        ct.distributed.read(path, pieces=4).compute()
    assert error.value.line == 301
    lines[300] = "7 500 1.0"
    path.write_text("\n".join(lines) + "\n")
    with pytest.raises(ct.ParseError, match="column coordinate 500 is outside 1..100") as error:
        ct.distributed.read(path, pieces=4).compute()
    assert error.value.line == 301
    path.write_text("\n".join(lines[:200]) + "\n")
    with pytest.raises(ct.ParseError, match="declares 400 entries"):
        ct.distributed.read(path, pieces=3)


# -- bad input -----------------------------------------------------------------------------


def test_bad_input_raises_clear_errors(client):
    a, b = _sparse((40, 30), 0.2, "csr", 18), _sparse((40, 30), 0.2, "csr", 19)
    A3 = ct.distributed.partition(a, parts=3)
    with pytest.raises(ct.ShapeError, match="partitioned differently"):
        ct.distributed.evaluate(
            "C(i,j) = A(i,j) + B(i,j)", A=A3, B=ct.distributed.partition(b, parts=2)
        )
    with pytest.raises(ct.ScheduleError, match="different indices"):
        ct.distributed.evaluate(
            "C(i,j) = A(i,j) + B(i,j)", A=A3, B=ct.distributed.partition(b, mode=1, parts=2)
        )
    with pytest.raises(ct.ScheduleError, match="distributed along i"):
        ct.distributed.evaluate(
            "y(i) = A(i,j) * x(j)",
            schedule="distribute(i)",
            A=ct.distributed.partition(a, mode=1, parts=2),
            x=np.ones(30),
        )
    with pytest.raises(ct.ScheduleError, match="nothing says how to distribute"):
        ct.distributed.evaluate("y(i) = A(i,j) * x(j)", A=a, x=np.ones(30))
    with pytest.raises(ct.ScheduleError, match="a term without it would be added once per block"):
        ct.distributed.evaluate(
            "y(i) = d(i) + A(i,j) * x(j)",
            schedule="distribute(j,2)",
            A=a,
            x=np.ones(30),
            d=np.ones(40),
        )
    with pytest.raises(ct.ScheduleError, match="not an index of the statement"):
        ct.distributed.evaluate(
            "y(i) = A(i,j) * x(j)", schedule="distribute(k,2)", A=A3, x=np.ones(30)
        )
    with pytest.raises(ct.ShapeError, match="asks for 2 blocks"):
        ct.distributed.evaluate(
            "y(i) = A(i,j) * x(j)", schedule="distribute(i,2)", A=A3, x=np.ones(30)
        )
    with pytest.raises(ct.ShapeError, match="index 'j' ranges over"):
        ct.distributed.evaluate("y(i) = A(i,j) * x(j)", A=A3, x=np.ones(31))
    with pytest.raises(ct.ShapeError, match="cannot be cut into 50 blocks"):
        ct.distributed.partition(a, parts=50)
    with pytest.raises(ct.ShapeError, match="increase strictly"):
        ct.distributed.partition(a, bounds=[0, 20, 20, 40])
    with pytest.raises(ct.ShapeError, match="not a mode"):
        ct.distributed.partition(a, mode=2)
    with pytest.raises(ValueError, match="balance must be one of"):
        ct.distributed.partition(a, balance="rows")
    with pytest.raises(TypeError, match="no tensor given"):
        ct.distributed.evaluate("y(i) = A(i,j) * x(j)", A=A3)
    with pytest.raises(ct.ScheduleError, match="coiter.distributed.evaluate"):
        ct.compile(
            "y(i) = A(i,j) * x(j)", formats={"A": "csr"}, schedule=ct.Schedule().distribute("i", 2)
        )
    with pytest.raises(ct.ScheduleError, match="unknown argument"):
        ct.distributed.evaluate(
            "y(i) = A(i,j) * x(j)", schedule="distribute(i,2,fast)", A=a, x=np.ones(30)
        )
    with pytest.raises(ct.ParseError):
        ct.distributed.evaluate("y(i) += A(i,j) * x(j)", A=A3, x=np.ones(30))


def test_a_tensor_too_large_for_a_worker_is_refused_before_sending():
    """Against a worker memory limit of 32 MiB (an in-process cluster: nothing runs)."""
    import dask
    from dask.distributed import Client, LocalCluster

    off = {
        f"distributed.worker.memory.{k}": False for k in ("target", "spill", "pause", "terminate")
    }
    with (
        dask.config.set(off),
        LocalCluster(
            n_workers=1,
            processes=False,
            memory_limit="32MiB",
            dashboard_address=":0",
            worker_dashboard_address=":0",
        ) as cluster,
        Client(cluster) as small,
    ):
        big = np.zeros(5_000_000)  # 40 MB, never written to
        with pytest.raises(ct.ShapeError, match="memory limit"):
            ct.distributed.partition(big, parts=1, client=small)
        a = ct.distributed.partition(
            _sparse((1_000_000, 10), 1e-5, "csr", 20), parts=2, client=small
        )
        with pytest.raises(
            ct.ShapeError, match="a dense block of the result"
        ):  # 1e6 x 10 doubles a block
            ct.distributed.evaluate(
                "Y(i,k) = A(i,j) * X(j,k)",
                out_format="dense",
                A=a,
                X=np.ones((10, 10)),
                client=small,
            )


# -- faults --------------------------------------------------------------------------------


class _SlowBlocks(distributed.WorkerPlugin):
    """On every worker, restarted ones too: each block's kernel call first leaves a mark naming
    its process, then waits."""

    def __init__(self, marks, seconds):
        self.marks, self.seconds = marks, seconds

    def setup(self, worker):
        import sys

        evaluate_module = sys.modules["coiter.evaluate"]  # (coiter.evaluate is also the function)
        original, marks, seconds = evaluate_module.evaluate, self.marks, self.seconds

        def slow(*args, **kwargs):
            with open(os.path.join(marks, f"{os.getpid()}-{time.monotonic_ns()}"), "w"):
                pass
            time.sleep(seconds)
            return original(*args, **kwargs)

        evaluate_module.evaluate = slow


def test_a_worker_killed_in_the_middle_of_a_run(tmp_path):
    """SIGKILL one worker process while it runs a block: Dask rebuilds the blocks it held (from
    the copy the scheduler keeps) and runs its tasks again elsewhere; the result is complete."""
    from dask.distributed import Client, LocalCluster

    a = _sparse((400, 300), 0.05, "csr", 21)
    x = _dense(300, 21)
    marks = str(tmp_path)
    parts = 6
    with (
        LocalCluster(n_workers=2, threads_per_worker=1, dashboard_address=":0") as cluster,
        Client(cluster) as c,
    ):
        c.wait_for_workers(2)
        A = ct.distributed.partition(a, parts=parts, client=c).persist()
        pids = c.run(os.getpid)
        c.register_plugin(_SlowBlocks(marks, 1.0))
        y = ct.distributed.evaluate("y(i) = A(i,j) * x(j)", A=A, x=x, client=c)
        victim = pids[A.placement[0]]
        deadline = time.monotonic() + 60
        while not any(name.startswith(f"{victim}-") for name in os.listdir(marks)):
            assert time.monotonic() < deadline, "no block started on the worker to kill"
            time.sleep(0.02)
        os.kill(victim, signal.SIGKILL)  # in the middle of its first block
        result = y.compute()
        np.testing.assert_allclose(result.to_numpy(), a.to_numpy() @ x)
        assert victim not in c.run(os.getpid).values()
        runs = os.listdir(marks)
        assert len(runs) >= parts + 1  # the interrupted block ran again
        np.testing.assert_array_equal(
            A.compute().to_numpy(), a.to_numpy()
        )  # its lost blocks rebuilt
