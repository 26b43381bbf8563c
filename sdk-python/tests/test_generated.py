"""The generated files are current: types.py from sdk/openapi.json (itself checked against
the service's code by test/openapi-document.test.ts) and _sync_client.py from
_async_client.py. `npm run sdk:generate` rewrites both."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_generated_files_are_current() -> None:
    result = subprocess.run([sys.executable, str(ROOT / "scripts" / "sdk-python-generate.py"), "--check"], capture_output=True, text=True)
    assert result.returncode == 0, result.stderr


def test_every_schema_of_the_document_is_a_type() -> None:
    import json

    from browser_device_operator import types

    schemas = json.loads((ROOT / "sdk" / "openapi.json").read_text())["components"]["schemas"]
    assert set(schemas) <= set(types.__all__)
    assert set(types.Task.__required_keys__) == set(schemas["Task"]["required"])
    assert set(types.CreateDeviceRequest.__annotations__) == set(schemas["CreateDeviceRequest"]["properties"])


def test_no_type_is_defined_twice() -> None:
    """A property's own type named like a schema (`Task.cache` and `TaskCache`) would replace
    the schema's type without a word at run time."""
    import typing

    from browser_device_operator import types

    assert len(types.__all__) == len(set(types.__all__))
    assert typing.get_args(typing.get_type_hints(types.Task)["cache"]) == (types.TaskCacheField, type(None))
    assert set(types.TaskCache.__required_keys__) >= {"id", "steps", "hits", "heals"}
