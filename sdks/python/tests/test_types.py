"""types.py is generated from the current document, and has required fields and enums."""
import json
import pathlib
import typing

import gen_types
from sbx import types


def test_types_match_document():
    doc = json.loads(gen_types.DOC.read_text())
    assert gen_types.OUT.read_text() == gen_types.generate(doc), "run python3 sdks/python/gen_types.py"


def test_required_and_enums():
    assert {"id", "state", "image", "class"} <= types.Sandbox.__required_keys__
    assert "name" in types.Sandbox.__optional_keys__
    state = typing.get_type_hints(types.Sandbox)["state"]
    assert "started" in typing.get_args(state)


def test_version_is_sbx_version():
    root = gen_types.HERE.parent
    doc = json.loads((root / "openapi.json").read_text())
    pkg = json.loads((root / "typescript" / "package.json").read_text())
    import sbx
    assert sbx.__version__ == doc["info"]["version"] == pkg["version"]
    assert f'version = "{sbx.__version__}"' in (root / "python" / "pyproject.toml").read_text()
