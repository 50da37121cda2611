"""Launch records (``launch-record/1``): one kernel launch = PTX + grid/block + buffers + params (+ check).

Format (see ``workloads/records/h200/*/launch.json``)::

    {"format": "launch-record/1", "name": ..., "source": {...free-form...}, "ptx": "kernel.ptx",
     "entry": "gemm_tma", "grid": [gx, gy, gz], "block": [bx, by, bz], "cluster": [1, 1, 1],
     "shared_bytes": 98328,
     "buffers": {"a": {"dtype": "float16", "shape": [M, K], "init": {"normal": 0.1} | "zeros" | "poison"}},
     "params": [{"tensormap": {"buffer": "a", "box": [128, 64], "swizzle_bytes": 128, "oob_fill": "zero"}},
                {"u32": 2048}, {"s32": -1}, {"u64": 1}, {"s64": 0}, {"f32": 0.125}, {"f64": 1.0},
                {"ptr": "a"}, {"ptr": null}],
     "check": {"output": "c", "reference": "gemm_nt", "inputs": ["a", "b"], "max_rel_err": 0.01, "args": {}}}

Every problem raises :class:`~warpgraph.core.errors.RecordError` naming the file and the JSON path
(``launch.json (params[3].tensormap.box)``) and what was expected.
"""
from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any, Literal, Union

import numpy as np
from pydantic import (BaseModel, ConfigDict, Field, PrivateAttr, ValidationError, field_validator,
                      model_serializer, model_validator)

from warpgraph.core.errors import RecordError, read_user_text

FORMAT = "launch-record/1"
RECORD_FILE = "launch.json"

# Limits checked before anything is allocated or read (a record is user input; a simulator in Python cannot run
# launches anywhere near these sizes in useful time anyway).
#: total bytes of all buffers of one record
MAX_BUFFER_BYTES = 8 << 30
#: CTAs of one launch (grid.x * grid.y * grid.z)
MAX_CTAS = 1 << 22
#: bytes of a launch.json / of a PTX file
MAX_RECORD_FILE_BYTES = 16 << 20
MAX_PTX_BYTES = 64 << 20
#: dynamic shared memory per CTA
MAX_SHARED_BYTES = 1 << 24
#: JSON nesting depth of a launch.json
MAX_JSON_DEPTH = 64
_BUFFER_NAME_RE = re.compile(r"[A-Za-z_][A-Za-z0-9_.\-]{0,127}")


# --------------------------------------------------------------------------------------------- dtypes
class DType:
    """A buffer element type: ``name`` (record spelling), ``storage`` (numpy dtype the bytes are viewed as;
    bfloat16 and float8 are stored as raw unsigned bits), ``itemsize``, ``is_float``."""

    __slots__ = ("name", "storage", "itemsize", "is_float")

    def __init__(self, name: str, storage: str, is_float: bool):
        self.name = name
        self.storage = np.dtype(storage)
        self.itemsize = self.storage.itemsize
        self.is_float = is_float

    def __repr__(self):
        return f"DType({self.name})"


DTYPES: dict[str, DType] = {d.name: d for d in [
    DType("float16", "float16", True), DType("bfloat16", "uint16", True), DType("float32", "float32", True),
    DType("float64", "float64", True), DType("float8_e4m3fn", "uint8", True), DType("float8_e5m2", "uint8", True),
    DType("int8", "int8", False), DType("uint8", "uint8", False), DType("int16", "int16", False),
    DType("uint16", "uint16", False), DType("int32", "int32", False), DType("uint32", "uint32", False),
    DType("int64", "int64", False), DType("uint64", "uint64", False), DType("bool", "uint8", False),
]}


def dtype_info(name: str) -> DType:
    try:
        return DTYPES[name]
    except KeyError:
        raise RecordError(f"unknown dtype {name!r}", hint="one of " + ", ".join(DTYPES)) from None


# ----------------------------------------------------------------------------------------- the schema
class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class NormalInit(_Strict):
    normal: float = Field(ge=0)


class UniformInit(_Strict):
    """``{"uniform": [lo, hi]}``: floats uniform in [lo, hi); integer dtypes draw integers in [lo, hi]."""

    uniform: tuple[float, float]

    @field_validator("uniform")
    @classmethod
    def _order(cls, v):
        if not v[0] <= v[1]:
            raise ValueError(f"uniform [lo, hi] needs lo <= hi, got {list(v)}")
        return v


class ValuesInit(_Strict):
    """``{"values": [...]}``: every element, flat in row-major order (converted to the buffer dtype)."""

    values: list[float | int]


class AddressesInit(_Strict):
    """``{"addresses": ["a0", "a1+256", ...]}``: the device addresses of buffers (+ a byte offset), one per
    element of a uint64 / int64 buffer: device pointer tables (grouped GEMM)."""

    addresses: list[str]


Init = Union[Literal["zeros", "poison"], NormalInit, UniformInit, ValuesInit, AddressesInit]


def parse_address(entry: str) -> tuple[str, int]:
    """``"name"`` / ``"name+OFFSET"`` -> (buffer name, byte offset)."""
    name, _, off = entry.partition("+")
    name = name.strip()
    try:
        return name, (int(off.strip(), 0) if off.strip() else 0)
    except ValueError:
        raise ValueError(f"address entry {entry!r}: expected NAME or NAME+BYTES") from None


class Buffer(_Strict):
    dtype: str
    shape: list[int]
    init: Init = "zeros"
    #: the host wrote the buffer just before the launch (a cudaMemset, a copy or a previous kernel), so its sectors
    #: start resident (clean) in the L2 instead of missing to DRAM on first touch (functional/run.py); an LRU
    #: L2 of finite capacity keeps the last-written part of buffers larger than it
    l2_resident: bool = False

    @model_serializer(mode="wrap")
    def _omit_default_residency(self, handler):
        """Records without the flag serialise as before (capture, scale and the trace-cache key)."""
        d = handler(self)
        if isinstance(d, dict) and not self.l2_resident:
            d.pop("l2_resident", None)
        return d

    @field_validator("shape", mode="before")
    @classmethod
    def _shape(cls, v):
        if isinstance(v, list) and any(isinstance(x, bool) for x in v):
            raise ValueError("buffer dimensions must be integers, not booleans")
        return v

    @field_validator("shape")
    @classmethod
    def _shape_range(cls, v, info):
        import math

        if len(v) > 8:
            raise ValueError(f"buffer has rank {len(v)}; at most 8 dimensions")
        if any(x < 0 for x in v):
            raise ValueError("buffer dimensions must be >= 0")
        d = DTYPES.get((info.data or {}).get("dtype"))
        n = math.prod(v)  # Python integers: no int64 overflow
        nbytes = n * (d.itemsize if d else 8)
        if nbytes > MAX_BUFFER_BYTES:
            raise ValueError(f"buffer of shape {v} is {nbytes:,} bytes, over the limit of {MAX_BUFFER_BYTES:,} "
                             "bytes per record")
        return v

    @property
    def info(self) -> DType:
        return dtype_info(self.dtype)

    @property
    def numel(self) -> int:
        import math

        return int(math.prod(self.shape)) if self.shape else 1

    @property
    def nbytes(self) -> int:
        return self.numel * self.info.itemsize


class TensorMapSpec(_Strict):
    buffer: str
    box: list[int]  # outermost-first, like the buffer shape
    swizzle_bytes: Literal[0, 32, 64, 128] = 0
    oob_fill: Literal["zero", "nan"] = "zero"


_INT_RANGES = {"u32": (0, 2**32 - 1), "s32": (-2**31, 2**31 - 1), "u64": (0, 2**64 - 1), "s64": (-2**63, 2**63 - 1)}
PARAM_KINDS = ("tensormap", "u32", "s32", "u64", "s64", "f32", "f64", "ptr")
#: (size, align) in the kernel parameter buffer per record param kind
PARAM_SIZE_ALIGN = {"tensormap": (128, 64), "u32": (4, 4), "s32": (4, 4), "f32": (4, 4),
                    "u64": (8, 8), "s64": (8, 8), "f64": (8, 8), "ptr": (8, 8)}


class Param(BaseModel):
    """One kernel parameter, written in JSON as a one-key object (``{"u32": 2048}``); ``kind`` is the key."""

    model_config = ConfigDict(extra="forbid")
    kind: Literal["tensormap", "u32", "s32", "u64", "s64", "f32", "f64", "ptr"]
    value: Any = None

    @model_validator(mode="before")
    @classmethod
    def _one_key(cls, data):
        if isinstance(data, Param):
            return data
        if isinstance(data, dict) and set(data) <= {"kind", "value"} and "kind" in data:
            data = {data["kind"]: data.get("value")}
        if not isinstance(data, dict) or len(data) != 1:
            raise ValueError("a param is a one-key object such as {\"u32\": 2048}, {\"ptr\": \"a\"} or "
                             "{\"tensormap\": {...}}")
        (kind, value), = data.items()
        if kind not in PARAM_KINDS:
            raise ValueError(f"unknown param kind {kind!r}; expected one of {', '.join(PARAM_KINDS)}")
        if kind in _INT_RANGES:
            if isinstance(value, bool) or not isinstance(value, int):
                raise ValueError(f"{kind} value must be an integer, got {value!r}")
            lo, hi = _INT_RANGES[kind]
            if not lo <= value <= hi:
                raise ValueError(f"{kind} value {value} out of range [{lo}, {hi}]")
        elif kind in ("f32", "f64"):
            if isinstance(value, bool) or not isinstance(value, (int, float)):
                raise ValueError(f"{kind} value must be a number, got {value!r}")
            value = float(value)
        elif kind == "ptr":
            if value is not None and not isinstance(value, str):
                raise ValueError(f"ptr value must be a buffer name or null, got {value!r}")
        elif kind == "tensormap":
            value = TensorMapSpec.model_validate(value)
        return {"kind": kind, "value": value}

    @model_serializer(mode="plain")
    def _ser(self):
        v = self.value.model_dump() if isinstance(self.value, TensorMapSpec) else self.value
        return {self.kind: v}

    @property
    def size(self) -> int:
        return PARAM_SIZE_ALIGN[self.kind][0]

    @property
    def align(self) -> int:
        return PARAM_SIZE_ALIGN[self.kind][1]

    @property
    def tensormap(self) -> TensorMapSpec | None:
        return self.value if self.kind == "tensormap" else None


class Expected(_Strict):
    """A golden output: ``file`` (a ``.npy`` next to the record, the output's values, any float or int dtype,
    the buffer's shape or its element count) and its tolerance: ``max_rel_err`` (``||out - ref|| / ||ref||``
    over the whole output) and / or ``max_abs_err`` (``max |out - ref|``); both must hold when both are given."""

    file: str
    max_rel_err: float | None = Field(default=None, gt=0)
    max_abs_err: float | None = Field(default=None, ge=0)

    @model_validator(mode="after")
    def _tol(self):
        if self.max_rel_err is None and self.max_abs_err is None:
            raise ValueError("an expected output needs a tolerance: max_rel_err and / or max_abs_err")
        if not self.file.endswith(".npy") or Path(self.file).is_absolute() or ".." in Path(self.file).parts:
            raise ValueError(f"expected file {self.file!r}: a .npy path inside the record folder")
        return self

    @model_serializer(mode="wrap")
    def _ser(self, handler):
        return {k: v for k, v in handler(self).items() if v is not None}


class Check(_Strict):
    """A named reference (``output`` = ``reference(*inputs, **args)`` within ``max_rel_err``) and / or golden
    outputs (``expected``: buffer name -> :class:`Expected`)."""

    output: str | None = None
    reference: str | None = None
    inputs: list[str] = Field(default_factory=list)
    max_rel_err: float | None = Field(default=None, gt=0)
    args: dict[str, Any] = Field(default_factory=dict)
    expected: dict[str, Expected] = Field(default_factory=dict)

    @model_validator(mode="after")
    def _form(self):
        if self.reference is None:
            if self.output is not None or self.inputs or self.max_rel_err is not None or self.args:
                raise ValueError("output / inputs / max_rel_err / args belong to a named reference: add "
                                 "\"reference\"")
            if not self.expected:
                raise ValueError("a check needs a named \"reference\" or \"expected\" golden outputs")
        elif self.output is None or self.max_rel_err is None:
            raise ValueError("a named reference needs \"output\" and \"max_rel_err\" (and \"inputs\")")
        return self

    @model_serializer(mode="wrap")
    def _ser(self, handler):
        d = handler(self)
        if not self.args:  # written only when given (records without args round-trip unchanged)
            d.pop("args", None)
        if not self.expected:
            d.pop("expected", None)
        if self.reference is None:
            for k in ("output", "reference", "inputs", "max_rel_err"):
                d.pop(k, None)
        return d


def _dim3(v):
    if isinstance(v, int):
        v = [v]
    if not isinstance(v, (list, tuple)) or not 1 <= len(v) <= 3:
        raise ValueError("expected a list of 1 to 3 positive integers")
    v = list(v) + [1] * (3 - len(v))
    if any(isinstance(x, bool) or not isinstance(x, int) or x < 1 for x in v):
        raise ValueError("expected positive integers")
    return v


class CompiledBlock(_Strict):
    """``ptxas -v`` facts of the record's entry for one ISA (``compiled.<isa>``; workloads/compiled.py)."""

    registers_per_thread: int = Field(ge=1, le=255)
    spill_store_bytes: int = Field(0, ge=0)
    spill_load_bytes: int = Field(0, ge=0)
    stack_frame_bytes: int = Field(0, ge=0)
    static_shared_bytes: int = Field(0, ge=0)
    barriers: int = Field(0, ge=0, le=16)
    tool: str = ""
    isa: str = ""
    #: per PTX instruction, its place in the SASS listing ptxas makes of this PTX ("-": none), space-separated
    #: (workloads/sass.py ``encode_places``): the issue order (workloads/issue_order.py) without ptxas / nvdisasm
    sass_places: str = ""
    sass_tool: str = ""
    #: the taken-branch periods of that listing (workloads/sass.py ``encode_branches``: ``index:period`` pairs, ""
    #: for none; None: not written): which taken PTX branches hold the warp, without ptxas / nvdisasm
    sass_branches: str | None = None
    #: whether ptxas serialised the entry's wgmma pipeline (workloads/sass.py ``wgmma_serialized``: each wgmma waits
    #: for the one before it; None: not written)
    sass_wgmma_serial: bool | None = None
    #: whether ptxas put the fix-ups of the entry's non-ftz ex2 expansions right behind their MUFU (workloads/sass.py
    #: ``ex2_fixups_follow``: the ex2s then run one MUFU latency apart per warp; None: not written)
    sass_ex2_serial: bool | None = None

    @field_validator("sass_places")
    @classmethod
    def _places(cls, v: str) -> str:
        bad = next((t for t in v.split() if t != "-" and not t.isdigit()), None)
        if bad is not None:
            raise ValueError(f"expected space-separated SASS places (integers, '-' for none), got {bad!r}")
        return v

    @field_validator("sass_branches")
    @classmethod
    def _branches(cls, v: str | None) -> str | None:
        bad = next((t for t in (v or "").split() if not all(x.isdigit() for x in t.partition(":")[::2])
                    or ":" not in t), None)
        if bad is not None:
            raise ValueError(f"expected space-separated index:period pairs of integers, got {bad!r}")
        return v


class LaunchRecord(BaseModel):
    """A parsed ``launch.json``. ``dir`` is the folder it was loaded from (None for in-memory records)."""

    model_config = ConfigDict(extra="forbid")
    format: Literal["launch-record/1"]
    name: str
    source: dict[str, Any] = Field(default_factory=dict)
    ptx: str = "kernel.ptx"
    entry: str
    grid: list[int]
    block: list[int]
    cluster: list[int] = Field(default_factory=lambda: [1, 1, 1])
    non_portable_cluster_size: bool = Field(False, description="cudaFuncAttributeNonPortableClusterSizeAllowed: "
                                            "clusters of up to 16 CTAs (H100/H200) instead of 8")
    shared_bytes: int = Field(default=0, ge=0, le=MAX_SHARED_BYTES, strict=True)
    buffers: dict[str, Buffer] = Field(default_factory=dict)
    params: list[Param] = Field(default_factory=list)
    check: Check | None = None
    compiled: dict[str, CompiledBlock] = Field(default_factory=dict)

    _dir: Path | None = PrivateAttr(default=None)
    _file: Path | None = PrivateAttr(default=None)
    _ptx_text: str | None = PrivateAttr(default=None)
    _measured: Any = PrivateAttr(default=False)  # False = not loaded yet
    _program: Any = PrivateAttr(default=None)

    @field_validator("grid", "block", "cluster", mode="before")
    @classmethod
    def _v_dim3(cls, v):
        return _dim3(v)

    @field_validator("grid")
    @classmethod
    def _v_grid(cls, v):
        if v[0] > 2**31 - 1 or v[1] > 65535 or v[2] > 65535:
            raise ValueError(f"grid {v} exceeds the CUDA limits (x <= 2^31-1, y and z <= 65535)")
        if v[0] * v[1] * v[2] > MAX_CTAS:
            raise ValueError(f"grid {v} has {v[0] * v[1] * v[2]:,} CTAs, over the simulator's limit of {MAX_CTAS:,}")
        return v

    @field_validator("block")
    @classmethod
    def _v_block(cls, v):
        if v[0] > 1024 or v[1] > 1024 or v[2] > 64 or v[0] * v[1] * v[2] > 1024:
            raise ValueError(f"block {v} exceeds the CUDA limits (x, y <= 1024, z <= 64, at most 1024 threads)")
        return v

    @field_validator("cluster")
    @classmethod
    def _v_cluster(cls, v):
        if v[0] * v[1] * v[2] > 16:
            raise ValueError(f"cluster {v} has {v[0] * v[1] * v[2]} CTAs; at most 16")
        return v

    @field_validator("buffers")
    @classmethod
    def _v_buffers(cls, v):
        for name in v:
            if not _BUFFER_NAME_RE.fullmatch(name):
                raise ValueError(f"buffer name {name!r} is not a plain name (it becomes a file name with "
                                 "--save-outputs): letters, digits, '_', '.', '-', starting with a letter or '_'")
        total = sum(b.nbytes for b in v.values() if b.dtype in DTYPES)
        if total > MAX_BUFFER_BYTES:
            raise ValueError(f"buffers total {total:,} bytes, over the limit of {MAX_BUFFER_BYTES:,}")
        return v

    @field_validator("ptx")
    @classmethod
    def _v_ptx(cls, v):
        import posixpath

        if not v or "\x00" in v or v.startswith(("/", "\\")) or (len(v) > 1 and v[1] == ":") \
                or ".." in v.replace("\\", "/").split("/") or posixpath.normpath(v) in (".", ""):
            raise ValueError(f"ptx {v!r} must be a file name relative to the record folder, inside it")
        return v

    # ------------------------------------------------------------------ location helpers
    @property
    def dir(self) -> Path | None:
        return self._dir

    @property
    def file(self) -> Path | None:
        return self._file if self._file is not None else (self._dir / RECORD_FILE if self._dir else None)

    def _loc(self, path: str | None = None) -> str:
        f = str(self.file) if self.file else f"<record {self.name}>"
        return f"{f} ({path})" if path else f

    def error(self, message: str, path: str | None = None, hint: str | None = None) -> RecordError:
        return RecordError(message, location=self._loc(path), hint=hint)

    # ------------------------------------------------------------------ derived facts
    @property
    def n_ctas(self) -> int:
        return self.grid[0] * self.grid[1] * self.grid[2]

    @property
    def threads_per_cta(self) -> int:
        return self.block[0] * self.block[1] * self.block[2]

    @property
    def ptx_path(self) -> Path | None:
        return (self._dir / self.ptx) if self._dir is not None else None

    def ptx_text(self) -> str:
        if self._ptx_text is None:
            p = self.ptx_path
            if p is None:
                raise self.error("record has no PTX text and no folder to read it from",
                                 "ptx", "a record loaded with load_record() or given PTX text")
            from warpgraph.core.errors import read_user_text

            root = self._dir.resolve()
            real = p.resolve()
            if real != root and root not in real.parents:
                raise self.error(f"PTX file {self.ptx!r} resolves outside the record folder", "ptx",
                                 "a PTX file inside the record folder")
            self._ptx_text = read_user_text(real, what="PTX file", max_bytes=MAX_PTX_BYTES, error=RecordError,
                                            location=str(p))
        return self._ptx_text

    def program(self):
        """The parsed PTX entry (``warpgraph.workloads.ptx.Program``), cached."""
        if self._program is None:
            from warpgraph.workloads.ptx import parse_ptx

            fname = str(self.ptx_path) if self.ptx_path else self.ptx
            self._program = parse_ptx(self.ptx_text(), filename=fname).entry(self.entry)
        return self._program

    @property
    def measured(self) -> dict | None:
        if self._measured is False:
            self._measured = None
            if self._dir is not None and (self._dir / "measured.json").is_file():
                f = self._dir / "measured.json"
                self._measured = parse_json_text(read_user_text(f, what="measured.json", error=RecordError,
                                                                max_bytes=MAX_RECORD_FILE_BYTES), str(f))
        return self._measured

    def tensormaps(self) -> list[tuple[int, TensorMapSpec]]:
        return [(i, p.value) for i, p in enumerate(self.params) if p.kind == "tensormap"]

    def to_json_dict(self) -> dict:
        ex = set() if self.compiled else {"compiled"}
        if not self.non_portable_cluster_size:
            ex.add("non_portable_cluster_size")     # written only when set (clusters of 9-16 CTAs)
        return self.model_dump(mode="json", exclude=ex or None)

    def derive(self, **changes) -> "LaunchRecord":
        """A modified copy (re-validated) that keeps this record's folder / PTX text (measured: dropped)."""
        d = self.to_json_dict()
        d.update(changes)
        new = LaunchRecord.model_validate(d)
        new._dir = self._dir
        new._ptx_text = self._ptx_text
        same_code = d.get("ptx", self.ptx) == self.ptx and d["entry"] == self.entry
        new._program = self._program if same_code else None
        if not same_code and "compiled" not in changes:
            new.compiled = {}
        new._measured = None
        new._file = None
        new.validate_self()
        return new

    # ------------------------------------------------------------------ validation
    def validate_self(self) -> "LaunchRecord":
        """Checks that need no PTX: dtypes, buffer references, tensormap boxes, check block."""
        for name, b in self.buffers.items():
            if b.dtype not in DTYPES:
                raise self.error(f"unknown dtype {b.dtype!r}", f"buffers.{name}.dtype", "one of " + ", ".join(DTYPES))
            self._validate_init(name, b)
        for i, p in enumerate(self.params):
            if p.kind == "ptr" and p.value is not None and p.value not in self.buffers:
                raise self.error(f"ptr names unknown buffer {p.value!r}", f"params[{i}].ptr",
                                 "one of the buffers: " + ", ".join(self.buffers) + " (or null)")
            if p.kind == "tensormap":
                self._validate_tensormap(i, p.value)
        if self.check is not None:
            c = self.check
            names = ([("check.output", c.output)] + [(f"check.inputs[{j}]", n) for j, n in enumerate(c.inputs)]
                     if c.reference is not None else [])
            names += [(f"check.expected.{n}", n) for n in c.expected]
            for path, n in names:
                if n not in self.buffers:
                    raise self.error(f"check names unknown buffer {n!r}", path, "one of " + ", ".join(self.buffers))
            if c.reference is not None:
                from warpgraph.workloads.references import known_references

                refs = known_references()
                if c.reference not in refs:
                    raise self.error(f"unknown reference {c.reference!r}", "check.reference",
                                     "one of " + ", ".join(refs) + ", or a function of a file given with "
                                     "--references FILE.py")
        nthreads = self.threads_per_cta
        if nthreads > 1024:
            raise self.error(f"block has {nthreads} threads", "block", "at most 1024 threads per CTA")
        return self

    def _validate_init(self, name: str, b: Buffer):
        init, path = b.init, f"buffers.{name}.init"
        if isinstance(init, ValuesInit):
            if len(init.values) != b.numel:
                raise self.error(f"{len(init.values)} values for a buffer of {b.numel} elements (shape {b.shape})",
                                 path + ".values", "one value per element, flat in row-major order")
            if not b.info.is_float and any(isinstance(v, float) and not float(v).is_integer() for v in init.values):
                raise self.error(f"non-integer value in the values of {b.dtype} buffer {name!r}", path + ".values")
        elif isinstance(init, AddressesInit):
            if b.dtype not in ("uint64", "int64"):
                raise self.error(f"an addresses init needs a uint64 or int64 buffer, {name!r} is {b.dtype}",
                                 f"buffers.{name}.dtype", "dtype uint64 (one device pointer per element)")
            if len(init.addresses) != b.numel:
                raise self.error(f"{len(init.addresses)} addresses for a buffer of {b.numel} elements",
                                 path + ".addresses", "one buffer name per element")
            for j, e in enumerate(init.addresses):
                try:
                    n, off = parse_address(e)
                except ValueError as err:
                    raise self.error(str(err), f"{path}.addresses[{j}]") from None
                if n not in self.buffers:
                    raise self.error(f"address of unknown buffer {n!r}", f"{path}.addresses[{j}]",
                                     "one of the buffers: " + ", ".join(self.buffers))
                if not 0 <= off <= self.buffers[n].nbytes:
                    raise self.error(f"offset {off} outside buffer {n!r} ({self.buffers[n].nbytes} bytes)",
                                     f"{path}.addresses[{j}]")

    def _validate_tensormap(self, i: int, t: TensorMapSpec):
        base = f"params[{i}].tensormap"
        if t.buffer not in self.buffers:
            raise self.error(f"tensormap names unknown buffer {t.buffer!r}", base + ".buffer",
                             "one of the buffers: " + ", ".join(self.buffers))
        b = self.buffers[t.buffer]
        info = DTYPES.get(b.dtype)
        if info is None:
            raise self.error(f"unknown dtype {b.dtype!r}", f"buffers.{t.buffer}.dtype", "one of " + ", ".join(DTYPES))
        if not 1 <= len(b.shape) <= 5:
            raise self.error(f"tensormap over a rank-{len(b.shape)} buffer", base + ".buffer", "a buffer of rank 1..5")
        if len(t.box) != len(b.shape):
            raise self.error(f"box {t.box} has rank {len(t.box)} but buffer {t.buffer!r} has shape {b.shape}",
                             base + ".box", f"{len(b.shape)} box sizes, outermost-first")
        for d, x in enumerate(t.box):
            if not 1 <= x <= 256:
                raise self.error(f"box size {x} (dimension {d})", base + ".box", "each box size in 1..256")
        inner = t.box[-1] * info.itemsize
        if inner % 16:
            raise self.error(f"innermost box extent is {inner} bytes", base + ".box",
                             "innermost box bytes (box[-1] x element size) a multiple of 16")
        if t.swizzle_bytes and inner > t.swizzle_bytes:
            raise self.error(f"innermost box extent {inner} bytes exceeds the {t.swizzle_bytes}-byte swizzle span",
                             base + ".box", f"box[-1] x element size <= {t.swizzle_bytes} when swizzled")
        stride = info.itemsize
        for d in range(len(b.shape) - 1, 0, -1):
            stride *= b.shape[d]
            if stride % 16:
                raise self.error(f"row pitch of buffer {t.buffer!r} is {stride} bytes (dimension {d - 1})",
                                 base + ".buffer", "global strides that are multiples of 16 bytes (TMA requirement)")

    def validate_against(self, program=None) -> "LaunchRecord":
        """Check the params against the PTX entry's ``.param`` list (count, type, size, alignment).

        ``program`` is a parsed ``Program`` (its ``.params``); None parses just the entry's parameter list
        from the PTX text (no full parser needed)."""
        self.validate_self()
        if program is None:
            ptx_params = entry_params(self.ptx_text(), self.entry, str(self.ptx_path or self.ptx))
        else:
            ptx_params = [_param_from_program(p) for p in program.params]
        if len(ptx_params) != len(self.params):
            names = ", ".join(f"{p['name']}: {p['decl']}" for p in ptx_params)
            raise self.error(f"record has {len(self.params)} params but the PTX entry {self.entry!r} declares "
                             f"{len(ptx_params)}", "params", f"one param per PTX .param, in order: {names}")
        for i, (p, q) in enumerate(zip(self.params, ptx_params)):
            ok, want = _param_matches(p.kind, q)
            if not ok:
                raise self.error(f"param kind {p.kind!r} does not fit PTX parameter {q['name']} ({q['decl']})",
                                 f"params[{i}]", want)
        if program is not None:
            self._validate_block(program)
        return self

    def _validate_block(self, program) -> None:
        """``block`` against the entry's ``.reqntid`` (exact) and ``.maxntid`` (upper bound) directives."""
        req = tuple(getattr(program, "reqntid", None) or ())
        if req:
            want = list(req) + [1] * (3 - len(req))
            if list(self.block) != want[:3]:
                raise self.error(f"block {self.block} does not match the PTX entry's .reqntid {', '.join(map(str, req))}",
                                 "block", f"block {want[:3]} (the kernel was compiled for exactly that CTA shape)")
        mx = tuple(getattr(program, "maxntid", None) or ())
        if mx:
            import math

            lim = math.prod(mx)
            if self.threads_per_cta > lim:
                raise self.error(f"block {self.block} has {self.threads_per_cta} threads, over the PTX entry's "
                                 f".maxntid {', '.join(map(str, mx))} ({lim} threads)", "block",
                                 f"at most {lim} threads per CTA")


# ------------------------------------------------------------------------------- PTX parameter list
def entry_params(ptx_text: str, entry: str, filename: str = "kernel.ptx") -> list[dict]:
    """The ``.param`` list of ``.entry entry(...)``: dicts name, type ("u32", "b8"...), size, align, array,
    decl (text). A light-weight scan so records can be checked without the full PTX parser."""
    import re

    m = re.search(r"\.entry\s+" + re.escape(entry) + r"\s*\(", ptx_text)
    if m is None:
        found = re.findall(r"\.entry\s+(\w+)", ptx_text)
        raise RecordError(f"PTX has no .entry {entry!r}", location=f"{filename}",
                          hint="entry is one of: " + (", ".join(found) or "(no entries)"))
    end = ptx_text.find(")", m.end())
    body = ptx_text[m.end():end]
    out = []
    for decl in body.split(","):
        decl = decl.strip()
        if not decl:
            continue
        toks = decl.split()
        if toks[0] != ".param":
            continue
        align = None
        typ = None
        for j, tk in enumerate(toks):
            if tk == ".ptr":  # `.ptr .global .align N` is the pointee's alignment, not the param's
                break
            if tk == ".align":
                align = int(toks[j + 1])
            elif tk.startswith(".") and tk[1:] in _PTX_TYPE_SIZE and typ is None:
                typ = tk[1:]
        name = toks[-1]
        count = 1
        am = re.match(r"(\w+)\[(\d+)\]$", name)
        if am:
            name, count = am.group(1), int(am.group(2))
        size = _PTX_TYPE_SIZE.get(typ, 0) * count
        out.append(dict(name=name, type=typ, size=size, align=align or _PTX_TYPE_SIZE.get(typ, 1),
                        array=am is not None, decl=decl))
    return out


_PTX_TYPE_SIZE = {"b8": 1, "u8": 1, "s8": 1, "b16": 2, "u16": 2, "s16": 2, "f16": 2, "bf16": 2,
                  "b32": 4, "u32": 4, "s32": 4, "f32": 4, "b64": 8, "u64": 8, "s64": 8, "f64": 8}


def _param_from_program(p) -> dict:
    """Normalise a ``warpgraph.workloads.ptx`` Param (duck-typed) to the dict ``entry_params`` returns."""
    typ = str(getattr(p, "type", "") or "").lstrip(".")
    base = typ.split("[")[0].split()[0] if typ else ""
    size = int(getattr(p, "size", 0) or 0)
    align = getattr(p, "align", None)
    esize = _PTX_TYPE_SIZE.get(base, 0)
    array = bool(getattr(p, "array", False)) or "[" in typ or (esize and size > esize)
    if not array:  # scalar params are naturally aligned (a parser may report a `.ptr .align N` pointee value)
        align = esize
    return dict(name=getattr(p, "name", "?"), type=base, size=size or esize, align=align or esize,
                array=array, decl=f".param .{typ} {getattr(p, 'name', '?')} (size {size or esize}, align {align})")


def _param_matches(kind: str, q: dict) -> tuple[bool, str]:
    t, size, align, array = q["type"], q["size"], q["align"], q["array"]
    if kind == "tensormap":
        return (array and size == 128 and (align or 0) >= 64,
                "a tensormap needs `.param .align 64 .b8 name[128]`")
    if array:
        if size == 128:
            return False, "a {\"tensormap\": {...}} param for this `.param .align 64 .b8 name[128]`"
        return False, f"a param matching this {size}-byte .b8 array (launch-record/1 has only 128-byte tensormaps)"
    want = {"u32": ("u32", "s32", "b32"), "s32": ("u32", "s32", "b32"), "f32": ("f32", "b32"),
            "u64": ("u64", "s64", "b64"), "s64": ("u64", "s64", "b64"), "f64": ("f64", "b64"),
            "ptr": ("u64", "b64", "s64")}[kind]
    if t not in want:
        return False, f"PTX type .{'/.'.join(want)} for a {kind} param (this .param is .{t}, {size} bytes)"
    return True, ""


# ---------------------------------------------------------------------------------------- load / save
_INIT_CLASSES = ("NormalInit", "UniformInit", "ValuesInit", "AddressesInit")


def parse_json_text(text: str, file: str) -> Any:
    """``json.loads`` with located errors and a nesting-depth limit (:data:`MAX_JSON_DEPTH`)."""
    import re

    depth = 0
    for m in re.finditer(r'"(?:[^"\\]|\\.)*"|[\[\]{}]', text):  # brackets outside strings
        c = m.group()
        if c in "[{":
            depth += 1
            if depth > MAX_JSON_DEPTH:
                raise RecordError(f"JSON nested deeper than {MAX_JSON_DEPTH} levels",
                                  location=f"{file}:{text.count(chr(10), 0, m.start()) + 1}",
                                  hint=f"a launch record nested at most {MAX_JSON_DEPTH} levels deep")
        elif c in "]}":
            depth -= 1
    try:
        return json.loads(text)
    except json.JSONDecodeError as e:
        raise RecordError(f"not valid JSON: {e.msg} (column {e.colno})", location=f"{file}:{e.lineno}",
                          hint="well-formed JSON") from None
    except RecursionError:
        raise RecordError("JSON nested too deeply", location=file, hint="a flatter launch record") from None


def _json_path(loc: tuple) -> str:
    s = ""
    for x in loc:
        if isinstance(x, int):
            s += f"[{x}]"
        elif x in ("function-after[_one_key(), Param]", "function-before[_one_key(), Param]"):
            continue
        else:
            s += ("." if s else "") + str(x)
    return s


def _from_validation_error(e: ValidationError, file: str) -> RecordError:
    err = e.errors()[0]
    loc = tuple(x for x in err["loc"] if not (isinstance(x, str) and ("[" in x and "(" in x)))
    # literal/union noise: 'NormalInit', "literal['zeros','poison']"
    loc = tuple(x for x in loc if not (isinstance(x, str) and (x.startswith("literal[") or x in _INIT_CLASSES)))
    if len(loc) >= 3 and loc[0] == "params" and isinstance(loc[1], int) and loc[2] in TensorMapSpec.model_fields:
        loc = loc[:2] + ("tensormap",) + loc[2:]  # raised from inside Param._one_key
    path = _json_path(loc)
    msg = err["msg"]
    if msg.startswith("Value error, "):
        msg = msg[len("Value error, "):]
    hint = None
    if err["type"] == "extra_forbidden":
        msg = f"unknown key {loc[-1]!r}" if loc else msg
        hint = "keys of launch-record/1 (see the calibration README); free-form data goes under `source`"
    elif err["type"] == "missing":
        msg = f"missing key {loc[-1]!r}" if loc else msg
    n = len(e.errors())
    if n > 1:
        msg += f" (and {n - 1} more problem{'s' if n > 2 else ''})"
    return RecordError(msg, location=f"{file} ({path})" if path else file, hint=hint)


def record_from_dict(data: dict, *, dir: str | Path | None = None, file: str | None = None,
                     ptx_text: str | None = None) -> LaunchRecord:
    """Validate a record dict (schema + self-consistency); attach ``dir`` / PTX text when given."""
    fname = file or (str(Path(dir) / RECORD_FILE) if dir else "<launch record>")
    if not isinstance(data, dict):
        raise RecordError("a launch record is a JSON object", location=fname)
    if data.get("format") != FORMAT:
        raise RecordError(f"format is {data.get('format')!r}", location=f"{fname} (format)", hint=f"{FORMAT!r}")
    try:
        rec = LaunchRecord.model_validate(data)
    except ValidationError as e:
        raise _from_validation_error(e, fname) from None
    rec._dir = Path(dir) if dir is not None else None
    rec._file = Path(file) if file else None
    rec._ptx_text = ptx_text
    rec.validate_self()
    return rec


def load_record(path: str | Path) -> LaunchRecord:
    """Load ``DIR/launch.json`` (or a ``*.json`` file) into a validated :class:`LaunchRecord`.

    Checks the schema and the record's own consistency; ``record.validate_against(record.program())``
    additionally checks the params against the PTX."""
    p = Path(path)
    if not p.exists():  # a bundled record's short name, e.g. h200/gemm_tma_M2048_N2048_K2048
        from warpgraph.workloads.bundled import bundled_record_path

        p = bundled_record_path(p) or p
    f = p / RECORD_FILE if p.is_dir() else p
    if not f.is_file():
        raise RecordError(f"no launch record at {p}", location=str(p),
                          hint=f"a folder holding {RECORD_FILE} + the PTX, the path of a launch .json file, or a "
                               f"bundled record's short name (`warpgraph records list`)")
    data = parse_json_text(read_user_text(f, what="launch record", max_bytes=MAX_RECORD_FILE_BYTES,
                                          error=RecordError), str(f))
    rec = record_from_dict(data, dir=f.parent, file=str(f))
    return rec


def save_record(record: LaunchRecord, dir: str | Path, ptx_text: str | None = None,
                measured: dict | None = None) -> LaunchRecord:
    """Write ``dir/launch.json`` and ``dir/<record.ptx>`` (from ``ptx_text`` or the record's own PTX);
    returns the record as loaded from there."""
    d = Path(dir)
    d.mkdir(parents=True, exist_ok=True)
    text = ptx_text if ptx_text is not None else record.ptx_text()
    (d / record.ptx).write_text(text)
    (d / RECORD_FILE).write_text(json.dumps(record.to_json_dict(), indent=1) + "\n")
    if measured is not None:
        (d / "measured.json").write_text(json.dumps(measured, indent=1) + "\n")
    return load_record(d)
