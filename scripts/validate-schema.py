#!/usr/bin/env python3
"""Validates output files against iobench's published JSON Schemas (docs/schema/).

usage: validate-schema.py SCHEMA_NAME FILE... [-- SCHEMA_NAME FILE...]...
       (SCHEMA_NAME: fio-json, live-line, ...; one process for many checks)

A file ending in .jsonl is JSON Lines: every line is validated. Every schema in
docs/schema/ is registered by its $id, so the schemas' references between each other
resolve. Exit status 0: all valid; 1: a file is invalid (each error printed with its
path in the document); 2: bad usage or python3-jsonschema missing.
"""
import json
import pathlib
import sys

try:
    import jsonschema
except ImportError as e:
    print(f"validate-schema: python3-jsonschema is needed ({e})", file=sys.stderr)
    sys.exit(2)
try:
    # jsonschema 4.18 and later resolve references through `referencing`.
    from referencing import Registry, Resource
except ImportError:
    # Older ones (Debian 12's 4.10) through a RefResolver with a store.
    Registry = None

SCHEMAS = pathlib.Path(__file__).resolve().parent.parent / "docs" / "schema"


def all_schemas():
    """Every schema of docs/schema by its $id."""
    out = {}
    for p in sorted(SCHEMAS.glob("*.schema.json")):
        doc = json.loads(p.read_text())
        out[doc["$id"]] = doc
    return out


def make_validator(cls, schema, schemas):
    """A validator of `schema` that resolves references to the others."""
    if Registry is not None:
        reg = Registry().with_resources(
            (i, Resource.from_contents(d)) for i, d in schemas.items()
        )
        return cls(schema, registry=reg)
    resolver = jsonschema.RefResolver.from_schema(schema, store=dict(schemas))
    return cls(schema, resolver=resolver)


def main(argv):
    groups = [[]]
    for a in argv[1:]:
        if a == "--":
            groups.append([])
        else:
            groups[-1].append(a)
    if any(len(g) < 2 for g in groups):
        print(__doc__, file=sys.stderr)
        return 2
    schemas = all_schemas()
    bad = 0
    for name, *files in groups:
        schema = json.loads((SCHEMAS / f"{name}.schema.json").read_text())
        cls = jsonschema.validators.validator_for(schema)
        cls.check_schema(schema)
        validator = make_validator(cls, schema, schemas)
        for f in files:
            text = pathlib.Path(f).read_text()
            if f.endswith(".jsonl"):
                docs = [json.loads(line) for line in text.splitlines() if line.strip()]
            else:
                docs = [json.loads(text)]
            if not docs:
                print(f"{f}: no document", file=sys.stderr)
                bad += 1
            for i, d in enumerate(docs):
                for err in validator.iter_errors(d):
                    where = "/".join(str(x) for x in err.absolute_path)
                    print(f"{name}: {f}[{i}] /{where}: {err.message}", file=sys.stderr)
                    bad += 1
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
