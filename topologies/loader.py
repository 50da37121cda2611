"""Load architecture YAMLs into an :class:`~warpgraph.topologies.schema.ArchSpec`.

``load_arch("h200" | path, overrides)``: ruamel.yaml round-trip loading (every key knows its file and line),
``extends:`` inheritance (bundled name or path relative to the file) with deep merge and cycle detection,
dotted overrides (``tma.admission_depth=8``, values parsed as YAML scalars) applied after the merge, and
pydantic errors translated to ``SpecError(location="h200.yaml:12 (tma.admission_depth)", hint=...)``.

Merge rules: mappings merge recursively; scalars and lists replace; ``null`` deletes a key (back to the
schema default); a section whose variant tag (``kind`` / ``policy``) changes is replaced, not merged.
"""
from __future__ import annotations

import copy
import io
import re
import types
import typing
from pathlib import Path
from typing import Any, Iterable

from pydantic import BaseModel, ValidationError
from ruamel.yaml import YAML
from ruamel.yaml.comments import CommentedMap, CommentedSeq
from ruamel.yaml.error import MarkedYAMLError, YAMLError

from warpgraph.core.errors import SpecError
from warpgraph.topologies.schema import VARIANT_FAMILIES, ArchSpec

__all__ = ["load_arch", "dump_arch", "diff_arch", "arch_json_schema", "list_archs", "arch_path", "parse_overrides"]

ARCH_DIR = Path(__file__).resolve().parent
Path_ = tuple  # a YAML path: tuple of keys
_FAMILY_PATHS = {tuple(f.split(".")): fam for fam, f in ((fam, fam) for fam in VARIANT_FAMILIES)}


# --- discovery ------------------------------------------------------------------------------------------
def list_archs() -> list[str]:
    """Names of the bundled architecture YAMLs."""
    return sorted(p.stem for p in ARCH_DIR.glob("*.yaml"))


def arch_path(name_or_path: str | Path, relative_to: Path | None = None) -> Path:
    """Resolve a bundled name (``h200``) or a path (relative to ``relative_to``'s folder, else the cwd)."""
    s = str(name_or_path)
    looks_like_path = "/" in s or "\\" in s or s.endswith((".yaml", ".yml"))
    if not looks_like_path:
        p = ARCH_DIR / f"{s}.yaml"
        if p.is_file():
            return p
    p = Path(s).expanduser()
    if not p.is_absolute() and relative_to is not None:
        cand = relative_to.parent / p
        if cand.is_file():
            return cand.resolve()
    if p.is_file():
        return p.resolve()
    if p.exists():
        raise SpecError(f"architecture {s!r} is not a regular file (a folder, FIFO or device)",
                        location=str(relative_to) if relative_to else None, hint="a path to a YAML file")
    raise SpecError(f"architecture {s!r} not found",
                    location=str(relative_to) if relative_to else None,
                    hint=f"a bundled name ({', '.join(list_archs())}) or a path to a YAML file")


def _label(p: Path) -> str:
    return p.name if p.parent == ARCH_DIR else str(p)


# --- YAML with line numbers -----------------------------------------------------------------------------
#: limits on an architecture YAML (user input): file size, nesting depth, nodes after alias expansion
MAX_YAML_BYTES = 4 << 20
MAX_YAML_DEPTH = 32
MAX_YAML_NODES = 200_000


def _read_yaml(p: Path) -> CommentedMap:
    from warpgraph.core.errors import read_user_text

    text = read_user_text(p, what="architecture YAML", max_bytes=MAX_YAML_BYTES, error=SpecError,
                          location=_label(p))
    yaml = YAML(typ="rt")
    try:
        data = yaml.load(text)
    except RecursionError:
        raise SpecError("YAML nested too deeply", location=_label(p),
                        hint=f"at most {MAX_YAML_DEPTH} levels of nesting") from None
    except MarkedYAMLError as e:
        mark = e.problem_mark or e.context_mark
        loc = f"{_label(p)}:{mark.line + 1}" if mark else _label(p)
        raise SpecError(f"invalid YAML: {e.problem or e}", location=loc, hint="well-formed YAML") from None
    except YAMLError as e:
        raise SpecError(f"invalid YAML: {e}", location=_label(p), hint="well-formed YAML") from None
    if data is None:
        raise SpecError("the file is empty (or only comments)", location=f"{_label(p)}:1",
                        hint="keys such as name:, extends: h200, sm:, tma:")
    if not isinstance(data, dict):
        raise SpecError("top level is not a mapping", location=f"{_label(p)}:1",
                        hint="keys such as name:, extends:, sm:, tma:")
    return data


def _plain(node: Any, label: str, prefix: Path_, locs: dict, budget: list | None = None) -> Any:
    """Convert ruamel nodes to plain Python, recording ``locs[path] = "file:line"``. Aliases are expanded, within
    limits: at most :data:`MAX_YAML_NODES` nodes in all (an alias bomb is refused) and :data:`MAX_YAML_DEPTH`
    levels."""
    if budget is None:
        budget = [MAX_YAML_NODES]
    budget[0] -= 1
    if budget[0] < 0:
        raise SpecError(f"YAML expands to more than {MAX_YAML_NODES:,} values (aliases / anchors)",
                        location=locs.get(prefix[:1], label), hint="a YAML without alias bombs")
    if len(prefix) > MAX_YAML_DEPTH:
        raise SpecError(f"YAML nested deeper than {MAX_YAML_DEPTH} levels",
                        location=f"{locs.get(prefix, label)} ({'.'.join(map(str, prefix[:4]))}...)",
                        hint=f"at most {MAX_YAML_DEPTH} levels of nesting")
    if isinstance(node, dict):
        out = {}
        for k, v in node.items():
            path = prefix + (str(k),)
            line = None
            if isinstance(node, CommentedMap):
                try:
                    line = node.lc.key(k)[0] + 1
                except (KeyError, TypeError, AttributeError):
                    line = None
            locs[path] = f"{label}:{line}" if line else label
            out[str(k)] = _plain(v, label, path, locs, budget)
        return out
    if isinstance(node, (list, CommentedSeq)):
        out_l = []
        for i, v in enumerate(node):
            path = prefix + (i,)
            if isinstance(node, CommentedSeq):
                try:
                    locs[path] = f"{label}:{node.lc.item(i)[0] + 1}"
                except (KeyError, TypeError, AttributeError):
                    pass
            out_l.append(_plain(v, label, path, locs, budget))
        return out_l
    if isinstance(node, bool) or node is None:
        return node
    if isinstance(node, int):
        return int(node)
    if isinstance(node, float):
        return float(node)
    if isinstance(node, str):
        return str(node)
    return node


_FILE_CACHE: dict = {}
#: bump when the parsed form (``_plain`` data, location strings) changes: older disk entries are then ignored
_DISK_FORMAT = 1


def _read_plain(p: Path, label: str) -> tuple[dict, dict]:
    """Parsed file as plain data + locations. ruamel's round-trip parse (for line numbers) is the slow part of a
    short run (~0.15-0.25 s for h200.yaml + h100.yaml), so the result is cached in this process by (path, mtime,
    size) and on disk (``<cache root>/arch_yaml``, core/cache_dir.py) by the file's bytes: a later process reads
    a JSON file instead of parsing. Only files that parsed are cached; ``WARPGRAPH_CACHE_DIR=off`` turns it off."""
    st = p.stat()
    key = (str(p), st.st_mtime_ns, st.st_size, label)
    hit = _FILE_CACHE.get(key)
    if hit is None:
        disk = _disk_entry(p, label) if st.st_size <= MAX_YAML_BYTES else None
        hit = _disk_load(disk) if disk is not None else None
        if hit is None:
            locs: dict = {}
            hit = (_plain(_read_yaml(p), label, (), locs), locs)
            if disk is not None:
                _disk_store(disk, hit)
        _FILE_CACHE[key] = hit
    return copy.deepcopy(hit[0]), dict(hit[1])


def _disk_entry(p: Path, label: str) -> Path | None:
    import hashlib

    import ruamel.yaml

    from warpgraph.core.cache_dir import cache_subdir

    d = cache_subdir("arch_yaml", create=False)
    if d is None:
        return None
    try:
        raw = p.read_bytes()
    except OSError:
        return None
    h = hashlib.sha256(f"{_DISK_FORMAT}\0{ruamel.yaml.__version__}\0{label}\0".encode() + raw).hexdigest()[:40]
    return d / f"{h}.json"


def _disk_load(f: Path) -> tuple[dict, dict] | None:
    import json

    try:
        d = json.loads(f.read_text())
        return d["data"], {tuple(k): v for k, v in d["locs"]}
    except (OSError, ValueError, KeyError, TypeError):
        return None   # absent or unreadable: parse the YAML again


def _disk_store(f: Path, hit: tuple[dict, dict]) -> None:
    import json
    import os

    try:
        f.parent.mkdir(parents=True, exist_ok=True)
        tmp = f.with_suffix(f".{os.getpid()}.tmp")
        tmp.write_text(json.dumps({"data": hit[0], "locs": [[list(k), v] for k, v in hit[1].items()]}))
        os.replace(tmp, f)
    except (OSError, TypeError, ValueError):
        pass   # a read-only or full cache only costs the parse next time


def _tag_key(path: Path_) -> str | None:
    fam = _FAMILY_PATHS.get(path)
    return VARIANT_FAMILIES[fam][2] if fam else None


def _merge(base: dict, over: dict, prefix: Path_, locs: dict) -> dict:
    out = dict(base)
    for k, v in over.items():
        path = prefix + (k,)
        if v is None:
            out.pop(k, None)
            for p in [p for p in locs if p[: len(path)] == path and len(p) > len(path)]:
                del locs[p]
            continue
        old = out.get(k)
        if isinstance(old, dict) and isinstance(v, dict):
            tag = _tag_key(path) or ("kind" if "kind" in v and "kind" in old else None)
            if tag and tag in v and v.get(tag) != old.get(tag):
                out[k] = v  # a different variant: replace the section
            else:
                out[k] = _merge(old, v, path, locs)
        else:
            out[k] = v
    return out


def _load_merged(p: Path, stack: tuple[Path, ...], locs: dict) -> dict:
    if p in stack:
        chain = " -> ".join(_label(s) for s in stack + (p,))
        raise SpecError(f"extends cycle: {chain}", location=_label(stack[-1]), hint="an acyclic extends chain")
    label = _label(p)
    data, own_locs = _read_plain(p, label)
    parent = data.get("extends")
    data.setdefault("name", p.stem)
    if parent is None:
        locs.update(own_locs)
        return data
    if not isinstance(parent, str):
        raise SpecError("extends must be an architecture name or path", location=own_locs.get(("extends",), label),
                        hint=f"one of {', '.join(list_archs())} or a path")
    try:
        pp = arch_path(parent, relative_to=p)
    except SpecError as e:
        raise SpecError(e.message, location=f"{own_locs.get(('extends',), label)} (extends)", hint=e.hint) from None
    base = _load_merged(pp, stack + (p,), locs)
    merged = _merge(base, data, (), locs)
    locs.update(own_locs)
    return merged


# --- overrides ------------------------------------------------------------------------------------------
def _yaml_scalar(text: str) -> Any:
    try:
        v = YAML(typ="safe").load(io.StringIO(text))
    except YAMLError:
        return text
    return v


def parse_overrides(overrides: dict | Iterable[str] | None) -> list[tuple[str, Any]]:
    """``{"a.b": v}`` or ``["a.b=v"]`` -> ``[("a.b", value)]``; string values are parsed as YAML."""
    if not overrides:
        return []
    items: list[tuple[str, Any]] = []
    if isinstance(overrides, dict):
        for k, v in overrides.items():
            items.append((str(k), _yaml_scalar(v) if isinstance(v, str) else v))
        return items
    for s in overrides:
        if not isinstance(s, str) or "=" not in s:
            raise SpecError(f"bad override {s!r}", location="override", hint="key.path=value, e.g. tma.admission_depth=8")
        k, v = s.split("=", 1)
        items.append((k.strip(), _yaml_scalar(v.strip())))
    return items


def _apply_override(data: dict, key: str, value: Any, locs: dict) -> None:
    if not key or any(not p for p in key.split(".")):
        raise SpecError(f"bad override path {key!r}", location="override", hint="dotted keys, e.g. l2.size_bytes")
    parts = _split_key(key, data)
    loc = f"override {key}"
    cur = data
    for i, part in enumerate(parts[:-1]):
        nxt = cur.get(part)
        if nxt is None:
            cls = _model_at(parts[: i + 1], data)
            if cls is None and not _is_mapping_field(parts[: i + 1], data):
                valid = _valid_keys(parts[:i], data)
                raise SpecError(f"unknown override path {key!r}: {'.'.join(parts[: i + 1])} is not a section",
                                location=loc, hint=f"one of: {', '.join(valid)}" if valid else None)
            nxt = cur[part] = {}
        elif not isinstance(nxt, dict):
            raise SpecError(f"unknown override path {key!r}: {'.'.join(parts[: i + 1])} is a value, not a section",
                            location=loc, hint=f"{'.'.join(parts[: i + 1])}=VALUE")
        cur = nxt
    cur[parts[-1]] = value
    locs[parts] = loc


# --- model introspection (valid keys for hints) ---------------------------------------------------------
def _family_model(path: Path_, data: dict) -> type[BaseModel] | None:
    fam = _FAMILY_PATHS.get(path)
    if fam is None:
        return None
    _, _, key, models, default = VARIANT_FAMILIES[fam]
    node = _get(data, path)
    tag = node.get(key, default) if isinstance(node, dict) else default
    return models.get(tag)


def _get(data: Any, path: Path_) -> Any:
    cur = data
    for p in path:
        if isinstance(cur, dict) and p in cur:
            cur = cur[p]
        else:
            return None
    return cur


def _walk(path: Path_, data: dict):
    """Yield (model class or None, is_mapping) for the node at ``path``."""
    cls: Any = ArchSpec
    mapping_value = None
    for i, p in enumerate(path):
        if mapping_value is not None:  # key of a dict[str, X] field
            cls, mapping_value = mapping_value, None
            continue
        if not (isinstance(cls, type) and issubclass(cls, BaseModel)) or p not in cls.model_fields:
            return None, False
        fam_cls = _family_model(path[: i + 1], data)
        if fam_cls is not None:
            cls = fam_cls
            continue
        ann = cls.model_fields[p].annotation
        if typing.get_origin(ann) in (typing.Union, types.UnionType):
            args = [a for a in typing.get_args(ann) if a is not type(None)]
        else:
            args = [ann]
        nxt = None
        for a in args:
            origin = typing.get_origin(a)
            if origin is dict:
                nxt = "dict"
                mapping_value = typing.get_args(a)[1]
                break
            if isinstance(a, type) and issubclass(a, BaseModel):
                nxt = a
                break
        if nxt is None:
            return None, False
        cls = nxt if nxt != "dict" else None
    if mapping_value is not None:
        return None, mapping_value
    return cls, False


def _model_at(path: Path_, data: dict) -> type[BaseModel] | None:
    cls, _ = _walk(path, data)
    return cls if isinstance(cls, type) else None


def _is_mapping_field(path: Path_, data: dict) -> bool:
    return _walk(path, data)[1] is not False


def _split_key(key: str, data: dict) -> Path_:
    """Split a dotted override key; keys of mapping fields may contain dots (``mma_sync.f16.m16n8k16``)."""
    parts = key.split(".")
    out: list[str] = []
    i = 0
    while i < len(parts):
        out.append(parts[i])
        i += 1
        vt = _walk(tuple(out), data)[1]
        if vt is not False and i < len(parts):
            rest = parts[i:]
            if isinstance(vt, type) and issubclass(vt, BaseModel) and len(rest) >= 2:
                out += [".".join(rest[:-1]), rest[-1]]
            else:
                out.append(".".join(rest))
            break
    return tuple(out)


def _valid_keys(path: Path_, data: dict) -> list[str]:
    cls = _model_at(path, data)
    return list(cls.model_fields) if cls else []


# --- error translation ----------------------------------------------------------------------------------
def _clean_loc(loc: tuple, data: dict) -> Path_:
    """Drop the union tags pydantic inserts after a variant field (``tensor_core.wgmma.x`` -> ``tensor_core.x``)."""
    out: list = []
    skip_next = False
    for el in loc:
        if skip_next:
            skip_next = False
            continue
        out.append(el)
        if tuple(out) in _FAMILY_PATHS:
            skip_next = True
    return tuple(out)


def _locate(path: Path_, locs: dict, top: str) -> str:
    for n in range(len(path), 0, -1):
        if path[:n] in locs:
            return locs[path[:n]]
    return locs.get(("name",), top)


_PATH_RE = re.compile(r"\b([a-z_0-9]+\.[a-z_0-9]+(?:\.[a-z_0-9]+)*)")

_HINTS = {
    "int_type": "an integer", "int_parsing": "an integer (no units: the unit is in the key name)",
    "float_type": "a number", "float_parsing": "a number (no units: the unit is in the key name)",
    "int_from_float": "an integer", "bool_type": "true or false", "bool_parsing": "true or false",
    "string_type": "a string", "dict_type": "a mapping (key: value lines)", "model_type": "a mapping",
    "list_type": "a list", "missing": "this required key",
    "bool_not_number": "a number (true / false are not numbers)", "finite_number": "a finite number (no .inf / .nan)",
}


def _translate(err: ValidationError, data: dict, locs: dict, top: str) -> SpecError:
    errors = err.errors(include_url=False)
    parts = []
    first = None
    for e in errors:
        path = _clean_loc(tuple(e["loc"]), data)
        dotted = ".".join(str(p) for p in path)
        if not path and e["type"] == "value_error":  # cross-section check: point at a key it names
            for m in _PATH_RE.findall(e["msg"]):
                cand = tuple(m.split("."))
                if cand in locs:
                    path, dotted = cand, m
                    break
        location = f"{_locate(path, locs, top)} ({dotted or 'top level'})"
        typ = e["type"]
        if typ == "extra_forbidden":
            valid = _valid_keys(path[:-1], data)
            msg = f"unknown key {path[-1]!r}" + (f" in {'.'.join(map(str, path[:-1]))}" if len(path) > 1 else "")
            hint = f"one of: {', '.join(valid)}" if valid else None
        elif typ == "union_tag_invalid":
            ctx = e.get("ctx", {})
            fam = _FAMILY_PATHS.get(path)
            key = VARIANT_FAMILIES[fam][2] if fam else "kind"
            msg = f"unknown {dotted} {key} {ctx.get('tag')!r}"
            hint = f"{key} one of: {ctx.get('expected_tags', '')}"
            if (path + (key,)) in locs:
                location = f"{locs[path + (key,)]} ({dotted}.{key})"
        elif typ == "literal_error":
            msg = f"invalid value {e.get('input')!r}"
            hint = e["msg"].replace("Input should be ", "")
        elif typ in ("greater_than", "greater_than_equal", "less_than", "less_than_equal"):
            msg = f"value {e.get('input')!r} out of range"
            hint = e["msg"].replace("Input should be ", "a number ")
        elif typ == "value_error":
            msg = e["msg"].replace("Value error, ", "")
            hint = "consistent values (cross-field check)"
        else:
            msg = f"{e['msg']} (got {e.get('input')!r})" if "input" in e and typ != "missing" else e["msg"]
            hint = _HINTS.get(typ, e["msg"].replace("Input should be ", ""))
        parts.append((location, msg, hint))
        first = first or (location, msg, hint)
    location, msg, hint = first
    if len(parts) > 1:
        msg += "".join(f"\n  also: {loc}: {m}" for loc, m, _ in parts[1:6])
        if len(parts) > 6:
            msg += f"\n  ... and {len(parts) - 6} more"
    return SpecError(msg, location=location, hint=hint)


# --- public API -----------------------------------------------------------------------------------------
def load_arch_dict(name_or_path: str | Path, overrides=None) -> tuple[dict, dict]:
    """The merged (not yet validated) data and its ``path -> "file:line"`` map."""
    p = arch_path(name_or_path)
    locs: dict = {}
    data = _load_merged(p, (), locs)
    for k, v in parse_overrides(overrides):
        _apply_override(data, k, v, locs)
    return data, locs


def load_arch(name_or_path: str | Path | ArchSpec = "h200", overrides: dict | list[str] | None = None) -> ArchSpec:
    """Load, merge, override and validate an architecture. User mistakes raise ``SpecError``."""
    from warpgraph.core.registry import load_entry_points

    load_entry_points()   # plugin components register their spec variants before anything is validated
    if isinstance(name_or_path, ArchSpec):
        if not overrides:
            return name_or_path
        data = name_or_path.model_dump(mode="python")
        locs: dict = {}
        for k, v in parse_overrides(overrides):
            _apply_override(data, k, v, locs)
        top = name_or_path.name
    else:
        data, locs = load_arch_dict(name_or_path, overrides)
        top = _label(arch_path(name_or_path))
    try:
        spec = ArchSpec.model_validate(data)
    except ValidationError as e:
        raise _translate(e, data, locs, top) from None
    from warpgraph.topologies.builder import check_component_kinds  # imports the component models

    check_component_kinds(spec, locate=lambda path: f"{_locate(path, locs, top)} ({'.'.join(path)})")
    return spec


def dump_arch(spec: ArchSpec, *, fmt: str = "yaml") -> str:
    """The fully resolved spec as YAML (or JSON with ``fmt="json"``)."""
    d = spec.model_dump(mode="json")
    if fmt == "json":
        import json

        return json.dumps(d, indent=2)
    yaml = YAML(typ="safe")
    yaml.default_flow_style = False
    yaml.sort_base_mapping_type_on_output = False
    buf = io.StringIO()
    yaml.dump(d, buf)
    return buf.getvalue()


def _flatten(d: Any, prefix: str = "") -> dict[str, Any]:
    out: dict[str, Any] = {}
    if isinstance(d, dict):
        for k, v in d.items():
            out.update(_flatten(v, f"{prefix}.{k}" if prefix else str(k)))
    else:
        out[prefix] = d
    return out


def diff_arch(a: ArchSpec, b: ArchSpec) -> list[tuple[str, Any, Any]]:
    """``[(dotted.path, value_in_a, value_in_b)]`` for every differing leaf (missing side = None)."""
    fa, fb = _flatten(a.model_dump(mode="json")), _flatten(b.model_dump(mode="json"))
    keys = sorted(set(fa) | set(fb))
    return [(k, fa.get(k), fb.get(k)) for k in keys if fa.get(k) != fb.get(k)]


def arch_json_schema() -> dict:
    """JSON schema of the architecture YAML (for editors / validation)."""
    return ArchSpec.model_json_schema()
