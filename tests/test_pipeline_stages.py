"""The compiler's stages as `kern.stages` shows them (docs/compiler.md, "Compiled kernels"),
and golden text of the IR printer (src/ir/ir_printer.hpp) for SpMV and SpAdd: a change to what
lowering builds for them shows here, line by line."""

import re

import numpy as np
import scipy.sparse as sp

import coiter as ct

STAGES = [
    "index notation",
    "concrete index notation",
    "scheduled",
    "iteration lattices",
    "lowered IR",
    "after IR passes",
]


def lowered(expression, formats):
    kern = ct.compile(expression, formats=formats)
    return re.sub(r"coiter_kernel_[0-9a-f]+", "KERNEL", kern.stages["lowered IR"])


def test_stages_are_listed_in_pipeline_order_and_end_with_the_engines_code():
    kern = ct.compile("y(i) = A(i,j) * x(j)", formats={"A": "csr", "x": "d", "y": "d"}, engine="c")
    stages = kern.stages
    assert list(stages) == STAGES + ["c"]
    assert stages["index notation"] == "y(i) = A(i,j) * x(j)"
    assert stages["concrete index notation"] == "∀i ∀j y(i) += A(i,j) * x(j)"
    assert stages["scheduled"] == kern.concrete
    assert stages["iteration lattices"] == "[U_i | A1]"
    assert stages["c"] == kern.source("c")


def test_ir_passes_add_the_coordinate_checks_to_the_lowered_ir():
    kern = ct.compile("y(i) = A(i,j) * x(j)", formats={"A": "csr", "x": "d", "y": "d"})
    before, after = kern.stages["lowered IR"], kern.stages["after IR passes"]
    assert "coordinate_violations" not in before
    assert "param coordinate_violations: int64* = pointer_slots[5]" in after
    assert "atomic add coordinate_violations[0], 1" in after


def test_spgemm_rows_are_prefetched_by_the_ir_passes():
    kern = ct.compile("C(i,j) = A(i,k) * B(k,j)", formats={"A": "csr", "B": "csr", "C": "csr"})
    assert "prefetch " not in kern.stages["lowered IR"]
    assert "prefetch B2_crd[" in kern.stages["after IR passes"]


def test_values_read_at_some_positions_only_are_prefetched_as_a_stream():
    # SpMTTKRP's second kernel reads B's value only where w's list at (k, l) is not empty: the
    # loop over B's fiber prefetches the values 16 positions ahead at every entry. Its rows
    # of w are prefetched only in fibers whose rows lie far apart (ir/prefetch_rows.cpp).
    kern = ct.compile(
        "A(i,j) = B(i,k,l) * w(k,j,l)",
        formats={"A": "ds", "B": "dss", "w": "dds:0,2,1"},
        schedule="reorder(i,k,l,j)",
    )
    assert "prefetch " not in kern.stages["lowered IR"]
    after = kern.stages["after IR passes"]
    # Once in each version of the fiber loop (with and without the row prefetches).
    assert after.count("prefetch B_vals[pB3 + 16]") == 2
    assert "if (pB3_begin + 4) < pB3_end {" in after and "if pB3_rows_far {" in after
    assert "prefetch w3_crd[pw3_ahead]" in after
    # CSR SpMV reads each entry's value at every position: nothing to stream.
    kern = ct.compile("y(i) = A(i,j) * x(j)", formats={"A": "csr", "x": "d", "y": "d"})
    assert "prefetch A_vals" not in kern.stages["after IR passes"]


def test_stages_of_a_kernel_that_runs():
    A = sp.random_array((30, 20), density=0.2, format="csr", random_state=1)
    x = np.arange(20.0)
    kern = ct.compile("y(i) = A(i,j) * x(j)", formats={"A": "csr", "x": "d", "y": "d"})
    assert set(STAGES) <= set(kern.stages)
    np.testing.assert_allclose(np.asarray(kern(A=A, x=x)), A @ x)


SPMV_IR = """\
kernel KERNEL
  param A_dim0: int64 = integer_slots[0]
  param A_dim1: int64 = integer_slots[1]
  param A2_pos: int32* = pointer_slots[0]
  param A2_crd: int32* = pointer_slots[1]
  param A_vals: float64* = pointer_slots[2]
  param x_dim0: int64 = integer_slots[2]
  param x_vals: float64* = pointer_slots[3]
  param y_dim0: int64 = integer_slots[3]
  param y_vals: float64* = pointer_slots[4] (written back)
  for i: int64 in [0, A_dim0) parallel(dynamic) {
    let pA1: int64 = i
    let py1: int64 = i
    let acc0: float64 = 0.0
    for pA2: int64 in [int64(A2_pos[pA1]), int64(A2_pos[pA1 + 1])) {
      let j: int64 = int64(A2_crd[pA2])
      let px1: int64 = j
      acc0 = acc0 + (A_vals[pA2] * x_vals[px1])
    }
    y_vals[py1] = acc0
  }
  return 0
"""


SPADD_IR = """\
kernel KERNEL
  param A_dim0: int64 = integer_slots[0]
  param A_dim1: int64 = integer_slots[1]
  param A2_pos: int32* = pointer_slots[0]
  param A2_crd: int32* = pointer_slots[1]
  param A_vals: float64* = pointer_slots[2]
  param B_dim0: int64 = integer_slots[2]
  param B_dim1: int64 = integer_slots[3]
  param B2_pos: int32* = pointer_slots[3]
  param B2_crd: int32* = pointer_slots[4]
  param B_vals: float64* = pointer_slots[5]
  param C_dim0: int64 = integer_slots[4]
  param C_dim1: int64 = integer_slots[5]
  param C2_pos: int32* = pointer_slots[6] (written back)
  param C2_pos_capacity: int64 = integer_slots[6] (written back)
  param C2_crd: int32* = pointer_slots[7] (written back)
  param C2_crd_capacity: int64 = integer_slots[7] (written back)
  param C_vals: float64* = pointer_slots[8] (written back)
  param C_vals_capacity: int64 = integer_slots[8] (written back)
  param i_chunk_begin: int64 = integer_slots[9]
  param i_chunk_end: int64 = integer_slots[10]
  let C2_count: int64 = 0
  for i: int64 in [i_chunk_begin, i_chunk_end) {
    let pA1: int64 = i
    let pB1: int64 = i
    let pC1: int64 = i
    let C2_row_start: int64 = C2_count
    let pA2: int64 = int64(A2_pos[pA1])
    let pA2_end: int64 = int64(A2_pos[pA1 + 1])
    let pB2: int64 = int64(B2_pos[pB1])
    let pB2_end: int64 = int64(B2_pos[pB1 + 1])
    if (pA2 < pA2_end) || (pB2 < pB2_end) {
      grow(C_vals, C_vals_capacity, C2_count + ((pA2_end - pA2) + (pB2_end - pB2)))
      grow(C2_crd, C2_crd_capacity, C2_count + ((pA2_end - pA2) + (pB2_end - pB2)))
      while ((pA2 < pA2_end) && (pB2 < pB2_end)) && (int64(B2_crd[pB2]) == int64(A2_crd[pA2])) {
        let jA: int64 = int64(A2_crd[pA2])
        let jB: int64 = int64(B2_crd[pB2])
        C_vals[C2_count] = A_vals[pA2] + B_vals[pB2]
        C2_crd[C2_count] = int32(jA)
        C2_count = C2_count + int64(C_vals[C2_count] != 0.0)
        pA2 = pA2 + 1
        pB2 = pB2 + 1
      }
      let cA2: int64 = 0
      let cB2: int64 = 0
      if (pA2 < pA2_end) && (pB2 < pB2_end) {
        cA2 = int64(A2_crd[pA2])
        cB2 = int64(B2_crd[pB2])
      }
      while (pA2 < pA2_end) && (pB2 < pB2_end) {
        let cA2_next: int64 = cA2
        if (pA2 + 1) < pA2_end {
          cA2_next = int64(A2_crd[pA2 + 1])
        }
        let cB2_next: int64 = cB2
        if (pB2 + 1) < pB2_end {
          cB2_next = int64(B2_crd[pB2 + 1])
        }
        let jA_0: int64 = cA2
        let jB_0: int64 = cB2
        let j: int64 = min(jA_0, jB_0)
        C_vals[C2_count] = select(jA_0 == j, A_vals[pA2], 0.0) + select(jB_0 == j, B_vals[pB2], 0.0)
        C2_crd[C2_count] = int32(j)
        C2_count = C2_count + int64(C_vals[C2_count] != 0.0)
        let pA2_advances: bool = cA2 == min(cA2, cB2)
        let pB2_advances: bool = cB2 == min(cA2, cB2)
        pA2 = select(pA2_advances, pA2 + 1, pA2)
        cA2 = select(pA2_advances, cA2_next, cA2)
        pB2 = select(pB2_advances, pB2 + 1, pB2)
        cB2 = select(pB2_advances, cB2_next, cB2)
      }
      while pA2 < pA2_end {
        let j_0: int64 = int64(A2_crd[pA2])
        C_vals[C2_count] = A_vals[pA2]
        C2_crd[C2_count] = int32(j_0)
        C2_count = C2_count + int64(C_vals[C2_count] != 0.0)
        pA2 = pA2 + 1
      }
      for pB2_0: int64 in [pB2, pB2_end) {
        let j_1: int64 = int64(B2_crd[pB2_0])
        C_vals[C2_count] = B_vals[pB2_0]
        C2_crd[C2_count] = int32(j_1)
        C2_count = C2_count + int64(C_vals[C2_count] != 0.0)
      }
    }
    C2_pos[pC1 + 1] = C2_pos[pC1 + 1] + int32(C2_count - C2_row_start)
  }
  return 0
"""


def test_ir_printer_golden_spmv():
    assert lowered("y(i) = A(i,j) * x(j)", {"A": "csr", "x": "d", "y": "d"}) == SPMV_IR


def test_ir_printer_golden_spadd():
    assert lowered("C(i,j) = A(i,j) + B(i,j)", {"A": "csr", "B": "csr", "C": "csr"}) == SPADD_IR
