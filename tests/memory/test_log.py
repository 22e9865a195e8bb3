"""The SQLite log's error: its code follows the convention of every other Lemmata error."""

from __future__ import annotations

import re

import pytest

from lemmata.errors import LemmataError
from lemmata.memory import StoreError
from lemmata.memory.log import MemoryLog


def _snake(name: str) -> str:
    return re.sub(r"(?<!^)(?=[A-Z])", "_", name.removesuffix("Error")).lower()


def test_store_error_code_is_the_snake_case_class_name_without_error():
    # the convention of lemmata.errors: DataSourceError -> data_source, ModelOutputError ->
    # model_output, SnapshotError -> snapshot
    import lemmata.errors as errors

    for name in ("DataSourceError", "ModelOutputError", "SnapshotError", "ConfigError"):
        assert getattr(errors, name).code == _snake(name)
    assert StoreError.code == _snake("StoreError") == "store"
    assert issubclass(StoreError, LemmataError)


def test_a_file_that_is_not_a_memory_raises_store_error_with_its_code(tmp_path):
    bad = tmp_path / "memory.sqlite3"
    bad.write_bytes(b"not a database at all" * 100)
    with pytest.raises(StoreError, match="not a usable memory file") as caught:
        MemoryLog(bad)
    assert caught.value.code == "store"
    assert re.fullmatch(r"[a-z][a-z0-9_]*", caught.value.code)
