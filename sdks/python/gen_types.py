#!/usr/bin/env python3
"""Writes src/sbx/types.py: a TypedDict per schema of ../openapi.json.

Run after the document changes (tests/test_types.py and internal/api's
TestOpenAPIPythonTypes fail until you do):
    python3 gen_types.py            # writes src/sbx/types.py
    python3 gen_types.py DOC        # prints the types of another document
"""
import json
import keyword
import pathlib

HERE = pathlib.Path(__file__).resolve().parent
DOC = HERE.parent / "openapi.json"
OUT = HERE / "src" / "sbx" / "types.py"


def py_type(s):
    if "$ref" in s:
        return '"' + s["$ref"].rsplit("/", 1)[1] + '"'
    if "const" in s:
        return "Literal[" + json.dumps(s["const"]) + "]"
    if "enum" in s:
        return "Literal[" + ", ".join(json.dumps(v) for v in s["enum"]) + "]"
    t = s.get("type")
    if isinstance(t, list):  # ["string", "null"]: a value that may be null
        rest = [x for x in t if x != "null"]
        inner = py_type({**s, "type": rest[0] if len(rest) == 1 else rest})
        return f"Optional[{inner}]" if "null" in t else inner
    if t == "array":
        return "List[" + py_type(s["items"]) + "]"
    if t == "object":
        return "Dict[str, " + py_type(s.get("additionalProperties", {})) + "]"
    return {"string": "str", "integer": "int", "number": "float", "boolean": "bool"}.get(t, "Any")


def generate(doc):
    lines = [
        '"""Types of the sbx API, generated from sdks/openapi.json by gen_types.py; do not edit."""',
        "",
        "from typing import Any, Dict, List, Literal, NotRequired, Optional, TypedDict, Union",
        "",
    ]
    schemas = doc["components"]["schemas"]
    for name in sorted(schemas):
        s = schemas[name]
        if "oneOf" in s:  # an event union: one TypedDict per value of its discriminator
            members = ", ".join(json.dumps(r["$ref"].rsplit("/", 1)[1]) for r in s["oneOf"])
            lines += ["", f"{name} = Union[{members}]", ""]
            continue
        props = dict(s.get("properties", {}))
        required = set(s.get("required", []))
        for part in s.get("allOf", []):  # a union's variant: its fields, type fixed
            part = schemas[part["$ref"].rsplit("/", 1)[1]] if "$ref" in part else part
            props.update(part.get("properties", {}))
            required |= set(part.get("required", []))
        # Field names that are not identifiers (CodeResult's MIME types) need
        # the functional form.
        if any(not p.isidentifier() or keyword.iskeyword(p) for p in props):
            fields = ", ".join(
                f"{json.dumps(p)}: " + (py_type(v) if p in required else f"NotRequired[{py_type(v)}]")
                for p, v in sorted(props.items())
            )
            lines += ["", f"{name} = TypedDict({json.dumps(name)}, {{{fields}}})", ""]
            continue
        lines += ["", f"class {name}(TypedDict):"]
        if s.get("description"):
            lines.append(f"    {json.dumps(s['description'])}")
        if not props:
            lines.append("    pass")
        for p, v in sorted(props.items()):
            t = py_type(v)
            lines.append(f"    {p}: {t if p in required else 'NotRequired[' + t + ']'}")
        lines.append("")
    return "\n".join(lines).rstrip() + "\n"


if __name__ == "__main__":
    import sys
    if len(sys.argv) > 1:
        sys.stdout.write(generate(json.loads(pathlib.Path(sys.argv[1]).read_text())))
    else:
        OUT.write_text(generate(json.loads(DOC.read_text())))
