"""Progress bars (coiter.progress, docs/jupyter.md): drawn when ct.config.progress forces them or
someone watches (a terminal, a notebook) an operation that runs past a second; silent
otherwise."""

import io
import sys
import time

import numpy as np
import pytest

import coiter as ct
from coiter import progress as progress_module

pytest.importorskip("tqdm")


@pytest.fixture
def setting():
    """ct.config.progress, restored after the test."""
    saved = ct.config.progress
    yield
    ct.config.progress = saved


class _Terminal(io.StringIO):
    """A stderr that says it is a terminal."""

    def isatty(self):
        return True


def _file_round_trip(tmp_path, name):
    T = ct.random((300, 200), 0.05, format="csr", seed=3)
    path = tmp_path / name
    ct.write(path, T)
    back = ct.read(path)
    assert np.array_equal(back.to_numpy(), T.to_numpy())


@pytest.mark.parametrize("name", ["A.mtx", "A.tns", "A.mtx.gz", "A.npz"])
def test_forced_bars_for_reading_writing_and_packing(tmp_path, capsys, setting, name):
    ct.config.progress = True
    _file_round_trip(tmp_path, name)
    err = capsys.readouterr().err
    assert f"writing {name}" in err
    assert f"reading {name}" in err
    assert "packing" in err or name.endswith(".npz")  # .npz keeps the saved arrays
    assert "100%" in err or name.endswith(".gz")  # a gzipped file's bar has no total


def test_silent_when_not_watched(tmp_path, capsys, setting):
    ct.config.progress = None  # auto: pytest's captured stderr is no terminal
    _file_round_trip(tmp_path, "A.mtx")
    with progress_module.progress(3, "by hand") as bar:
        bar.update(3)
    assert not bar.shown
    assert capsys.readouterr().err == ""


def test_auto_in_a_terminal_shows_only_slow_operations(monkeypatch, setting):
    ct.config.progress = None
    terminal = _Terminal()
    monkeypatch.setattr(sys, "stderr", terminal)
    monkeypatch.setattr(progress_module, "AUTO_DELAY_S", 0.2)
    with progress_module.progress(2, "quick step") as bar:
        bar.update(2)
    assert bar.shown
    assert terminal.getvalue() == ""  # done before the delay: nothing printed
    with progress_module.progress(2, "slow step") as bar:
        bar.update(1)
        # the ticker redraws the bar once the delay has passed, without any update
        deadline = 50
        while "slow step" not in terminal.getvalue() and deadline:
            time.sleep(0.05)
            deadline -= 1
        bar.update(1)
    assert "slow step" in terminal.getvalue()
    assert "2/2" in terminal.getvalue()


def test_never_when_switched_off(monkeypatch, setting):
    ct.config.progress = False
    terminal = _Terminal()
    monkeypatch.setattr(sys, "stderr", terminal)
    with progress_module.progress(1, "off", small=False) as bar:
        bar.update(1)
    assert not bar.shown and terminal.getvalue() == ""


def test_small_work_is_shown_only_when_forced(capsys, setting):
    ct.config.progress = None
    with progress_module.progress(1, "small", small=True) as bar:
        bar.update(1)
    assert not bar.shown
    ct.config.progress = True
    with progress_module.progress(1, "small", small=True) as bar:
        bar.update(1)
    assert bar.shown and "small" in capsys.readouterr().err


def test_forced_without_tqdm_says_what_to_install(monkeypatch, setting):
    ct.config.progress = True
    monkeypatch.setitem(sys.modules, "tqdm", None)  # import tqdm raises ImportError
    with (
        pytest.raises(ImportError, match="pip install tqdm"),
        progress_module.progress(1, "x"),
    ):
        pass
    ct.config.progress = None  # auto without tqdm: silent, no error
    monkeypatch.setattr(sys, "stderr", _Terminal())
    with progress_module.progress(1, "x") as bar:
        bar.update(1)
    assert not bar.shown


def test_lines_written_go_to_stdout_above_a_drawn_bar(capsys, setting):
    ct.config.progress = True
    with progress_module.progress(2, "with lines") as bar:
        bar.update(1)
        bar.write("halfway")
        bar.update(1)
    captured = capsys.readouterr()
    assert "halfway" in captured.out and "halfway" not in captured.err
    assert "with lines" in captured.err
    ct.config.progress = False
    with progress_module.progress(2, "silent") as bar:
        bar.write("still printed")
    captured = capsys.readouterr()
    assert "still printed" in captured.out and captured.err == ""


def test_a_callers_switch_overrides_the_setting_and_a_clock_bar_shows_its_notes(capsys, setting):
    ct.config.progress = False
    with progress_module.progress(2.0, "budget", "s", show=True) as bar:
        assert bar.shown
        bar.advance_to(1.5)
        bar.advance_to(9.0)  # (past the total: kept at the total)
        bar.note(timed=3, best="1.5 ms")
    err = capsys.readouterr().err
    assert "budget" in err and "best=1.5 ms" in err and "timed=3" in err
    ct.config.progress = True
    with progress_module.progress(2.0, "hidden", "s", show=False) as bar:
        assert not bar.shown
        bar.advance_to(1.0)
        bar.note(best="x")
    assert "hidden" not in capsys.readouterr().err
