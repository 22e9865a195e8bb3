"""``lemmata gui train-icons``: bad input is refused before anything is fetched or trained."""

from __future__ import annotations


def test_train_icons_refuses_unknown_sets_and_bad_steps(run_cli) -> None:  # type: ignore[no-untyped-def]
    r = run_cli("gui", "train-icons", "--sets", "tabler,nosuchset")
    assert r.returncode == 2 and "unknown icon sets nosuchset" in r.stderr
    r = run_cli("gui", "train-icons", "--steps", "0")
    assert r.returncode == 2 and "--steps must be at least 1" in r.stderr
    r = run_cli("gui", "train-icons", "--time-limit", "0")
    assert r.returncode == 2 and "--time-limit must be a positive" in r.stderr
    r = run_cli("gui", "train-icons", "--help")
    assert r.returncode == 0 and "--held-out" in r.stdout
    assert "--time-limit" in r.stdout and "--checkpoint" in r.stdout


def test_train_icons_refuses_a_bad_share_rate_or_start(run_cli, tmp_path) -> None:  # type: ignore[no-untyped-def]
    r = run_cli("gui", "train-icons", "--toolbar-share", "1.5")
    assert r.returncode == 2 and "--toolbar-share must lie in [0, 1]" in r.stderr
    r = run_cli("gui", "train-icons", "--lr", "0")
    assert r.returncode == 2 and "--lr must lie in (0, 1)" in r.stderr
    bogus = tmp_path / "enc.pt"
    bogus.write_text("not weights")
    r = run_cli("gui", "train-icons", "--start", str(bogus))
    assert r.returncode != 0 and "cannot be read" in r.stderr and "enc.pt" in r.stderr
    assert "Traceback" not in r.stderr
