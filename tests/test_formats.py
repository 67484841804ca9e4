"""Level types and formats: properties, capabilities, parsing, names, equality, printing."""

import pytest

import coiter as ct

# Kjolstad's thesis, Table 2-11 (defaults) and 2-12 (capabilities).
PROPERTIES = {
    "dense": dict(full=True, ordered=True, unique=True, branchless=False, compact=True),
    "compressed": dict(full=False, ordered=True, unique=True, branchless=False, compact=True),
    "singleton": dict(full=False, ordered=True, unique=True, branchless=True, compact=True),
    "hashed": dict(full=False, ordered=False, unique=True, branchless=False, compact=False),
    "range": dict(full=False, ordered=True, unique=True, branchless=False, compact=False),
    "offset": dict(full=False, ordered=True, unique=True, branchless=True, compact=False),
}
CAPABILITIES = {
    "dense": dict(locate=True, insert=True, append=False, position_iterate=False),
    "compressed": dict(locate=False, insert=False, append=True, position_iterate=True),
    "singleton": dict(locate=False, insert=False, append=True, position_iterate=True),
    "hashed": dict(locate=True, insert=True, append=False, position_iterate=True),
    "range": dict(locate=True, insert=False, append=False, coordinate_iterate=True),
    "offset": dict(locate=False, insert=False, append=False, position_iterate=True),
}
LEVELS = {
    "dense": ct.dense,
    "compressed": ct.compressed,
    "singleton": ct.singleton,
    "hashed": ct.hashed,
    "range": ct.range,
    "offset": ct.offset,
}


@pytest.mark.parametrize("name", sorted(LEVELS))
def test_level_properties_and_capabilities(name):
    level = LEVELS[name]
    assert level.name == name
    assert level.properties == PROPERTIES[name]
    for capability, expected in CAPABILITIES[name].items():
        assert level.capabilities[capability] == expected, capability


def test_configurable_properties():
    level = ct.compressed(ordered=False, unique=False)
    assert not level.ordered and not level.unique
    assert repr(level) == "compressed(ordered=False, unique=False)"
    assert level != ct.compressed and ct.compressed(ordered=True) == ct.compressed
    assert ct.singleton(unique=False).letter == "c"
    assert ct.hashed(buckets=16).buckets == 16
    with pytest.raises(ct.FormatError, match="branchless|configured|cannot"):
        ct.dense(full=False)
    with pytest.raises(ct.FormatError, match="bucket"):
        ct.compressed(buckets=4)
    with pytest.raises(ct.FormatError, match="positive"):
        ct.hashed(buckets=0)


@pytest.mark.parametrize(
    "name,order,text",
    [
        ("csr", 2, "ds"),
        ("csc", 2, "ds:1,0"),
        ("dcsr", 2, "ss"),
        ("dcsc", 2, "ss:1,0"),
        ("coo", 1, "s"),
        ("coo", 2, "uq"),
        ("coo", 4, "uccq"),
        ("csf", 3, "sss"),
        ("dense", 3, "ddd"),
        ("dia", 2, "dia"),
        ("ell", 2, "ell"),
    ],
)
def test_named_formats(name, order, text):
    fmt = ct.as_format(name, order)
    assert str(fmt) == text
    assert fmt.order == order
    assert ct.as_format(str(fmt), order) == fmt


def test_format_construction_and_equality():
    csr = ct.Format([ct.dense, ct.compressed])
    csc = ct.Format([ct.dense, ct.compressed], mode_order=(1, 0))
    assert csr.mode_order == (0, 1) and csc.mode_order == (1, 0)
    assert csr == ct.Format.parse("ds") == ct.as_format("csr", 2)
    assert csc == ct.Format.parse("ds:1,0") and csc != csr
    assert len({csr, ct.Format.parse("ds"), csc}) == 2
    assert repr(csr) == "Format('ds')"
    assert "compressed(ordered=False)" in repr(ct.Format([ct.dense, ct.compressed(ordered=False)]))
    assert csr.levels == [ct.dense, ct.compressed]


def test_blocked_and_diagonal_formats_have_more_levels_than_modes():
    b = ct.bcsr((2, 3))
    assert b.order == 2 and len(b.levels) == 4
    assert b.block_shape == (2, 3)
    assert b.level_map == [
        ("block", 0, 2),
        ("block", 1, 3),
        ("within_block", 0, 2),
        ("within_block", 1, 3),
    ]
    assert str(b) == "bcsr((2, 3))" and ct.as_format("bcsr((2, 3))", 2) == b
    assert b != ct.bcsr((3, 2))
    dia = ct.as_format("dia", 2)
    assert [lv.name for lv in dia.levels] == ["dense", "range", "offset"]
    assert dia.level_map[0][0] == "diagonal"
    ell = ct.as_format("ell", 2)
    assert [lv.name for lv in ell.levels] == ["dense", "dense", "singleton"]
    assert not ell.levels[2].compact


@pytest.mark.parametrize(
    "bad,match",
    [
        ("dx", "character 'x' at column 2"),
        ("", "empty"),
        ("ds:1,1", "not a permutation"),
        ("ds:0", "mode order"),
        ("ds:a,b", "bad mode order"),
        ("bcsr", "block shape"),
    ],
)
def test_bad_format_strings(bad, match):
    with pytest.raises(ct.FormatError, match=match):
        ct.as_format(bad, 2)


def test_format_errors():
    with pytest.raises(ct.FormatError, match="not a permutation"):
        ct.Format([ct.dense, ct.compressed], mode_order=(0, 2))
    with pytest.raises(ct.FormatError, match="order-2"):
        ct.as_format("csr", 3)
    with pytest.raises(ct.FormatError, match="dia"):
        ct.Format([ct.dense, ct.range])
    with pytest.raises(ct.FormatError):
        ct.bcsr((0, 2))
    with pytest.raises(ct.FormatError, match="not a format"):
        ct.as_format(42, 2)
    assert issubclass(ct.FormatError, ValueError) and issubclass(ct.FormatError, ct.CoiterError)


@pytest.mark.parametrize(
    "spec,problem",
    [
        ("ds", None),
        ("sds", None),  # a compressed level under a dense level under a compressed one
        ("sdsd", None),
        ("sq", None),
        ("dq", "singleton level must follow a compressed level"),
        ("sdq", "singleton level must follow a compressed level"),
    ],
)
def test_result_assembly_problem(spec, problem):
    found = ct.as_format(spec, len(spec)).result_assembly_problem
    if problem is None:
        assert found is None
    else:
        assert problem in found
