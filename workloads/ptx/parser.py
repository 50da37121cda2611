"""PTX text -> decoded :class:`Module` (Contract 1).

A small hand-written tokenizer + recursive statement parser. It understands the subset of PTX that Triton and
``nvcc -ptx`` emit for kernels: module directives, ``.entry``/``.func`` with params and performance directives,
``.reg``/``.shared``/``.local`` declarations (also inside ``{ }`` scopes, renamed uniquely), labels (scoped),
guards, vector / address / tensor-coordinate operands, dual destinations ``%r|%p`` and all immediate forms.
``.loc``/``.file``/``.pragma`` and ``.section`` blocks (DWARF) are skipped.
"""
from __future__ import annotations

import copy
import re
import struct

from ...core.errors import PTXError
from .isa import KNOWN_OPCODES, MULTI_OPCODES, NO_DST, Kind, classify
from .model import (Addr, Imm, Instruction, Label, Module, Pair, Param, Program, Reg, SharedVar, Sink, Sym, Targets,
                    Vec)

_TYPE_SIZES = {"b8": 1, "s8": 1, "u8": 1, "b16": 2, "s16": 2, "u16": 2, "f16": 2, "bf16": 2,
               "b32": 4, "s32": 4, "u32": 4, "f32": 4, "f16x2": 4, "bf16x2": 4, "tf32": 4,
               "b64": 8, "s64": 8, "u64": 8, "f64": 8, "pred": 1, "b128": 16, "e4m3": 1, "e5m2": 1}

# a modifier shaped like a type (.s32, .q32, .f16x2) must be a PTX type; vector/shape/count modifiers excluded
_TYPE_LIKE = re.compile(r"(?![vx]\d)[a-z]{1,2}\d{1,3}(?:x\d)?")
_OTHER_TYPES = {"b1", "s4", "u4", "e4m3x2", "e5m2x2", "e2m1", "e2m3", "e3m2", "ue8m0", "s16x2", "u16x2", "s8x4", "u8x4",
                "f16x2", "bf16x2", "f32x2", "b4", "b6", "e2m1x2", "e2m3x2", "e3m2x2", "ue8m0x2", "b8x16", "b6x16", "b4x16"}

_TOKEN_RE = re.compile(r"""
    (?P<ws>[ \t\r\f\v]+)
  | (?P<nl>\n)
  | (?P<lcom>//[^\n]*)
  | (?P<bcom>/\*.*?\*/)
  | (?P<num>0[fF][0-9a-fA-F]{8}(?![\w])|0[dD][0-9a-fA-F]{16}(?![\w])|0[xX][0-9a-fA-F]+U?|0[bB][01]+U?
            |\d+\.\d*(?:[eE][-+]?\d+)?|\d+[eE][-+]?\d+|\d+U?)
  | (?P<ident>[A-Za-z_$%.][A-Za-z0-9_$.]*(?:::[A-Za-z0-9_$.]+)*)
  | (?P<str>"[^"\n]*")
  | (?P<punct>[{}()\[\],;:|+\-!@<>=*/])
""", re.VERBOSE | re.DOTALL)


class Tok:
    __slots__ = ("kind", "text", "line")

    def __init__(self, kind, text, line):
        self.kind, self.text, self.line = kind, text, line

    def __repr__(self):  # pragma: no cover
        return f"Tok({self.kind},{self.text!r},{self.line})"


def tokenize(text: str, filename: str) -> list:
    toks = []
    pos, line, n = 0, 1, len(text)
    m = _TOKEN_RE.match
    while pos < n:
        mo = m(text, pos)
        if mo is None:
            raise PTXError(f"unexpected character {text[pos]!r}", location=f"{filename}:{line}",
                           hint="a PTX token (identifier, register, number, punctuation)")
        k = mo.lastgroup
        s = mo.group()
        if k == "nl":
            line += 1
        elif k == "bcom":
            line += s.count("\n")
        elif k in ("ws", "lcom"):
            pass
        else:
            toks.append(Tok(k, s, line))
        pos = mo.end()
    toks.append(Tok("eof", "", line))
    return toks


def _parse_int(text: str) -> int:
    t = text.rstrip("U")
    if t[:2] in ("0x", "0X"):
        return int(t[2:], 16)
    if t[:2] in ("0b", "0B"):
        return int(t[2:], 2)
    if len(t) > 1 and t[0] == "0" and t.isdigit():
        return int(t, 8)
    return int(t)


def split_opcode(full: str) -> tuple:
    for mo in MULTI_OPCODES:
        if full == mo or full.startswith(mo + "."):
            rest = full[len(mo) + 1:]
            return mo, tuple(rest.split(".")) if rest else ()
    parts = full.split(".")
    return parts[0], tuple(parts[1:])


class _Parser:
    def __init__(self, text: str, filename: str):
        self.filename = filename
        self.lines = text.split("\n")
        self.toks = tokenize(text, filename)
        self.i = 0

    # ---- token helpers
    def peek(self, k=0) -> Tok:
        return self.toks[min(self.i + k, len(self.toks) - 1)]

    def next(self) -> Tok:
        t = self.toks[self.i]
        if t.kind != "eof":
            self.i += 1
        return t

    def err(self, msg, tok=None, hint=None):
        tok = tok or self.peek()
        where = f"{self.filename}:{tok.line}"
        shown = tok.text if tok.kind != "eof" else "end of file"
        raise PTXError(f"{msg} (at {shown!r})", location=where, hint=hint)

    def expect(self, text, hint=None):
        t = self.next()
        if t.text != text:
            self.err(f"expected {text!r}", t, hint or f"{text!r}")
        return t

    def skip_line(self):
        line = self.next().line
        while self.peek().line == line and self.peek().kind != "eof" and self.peek().text not in (";", "}"):
            self.next()
        if self.peek().text == ";":
            self.next()

    def skip_statement(self):
        depth = 0
        while True:
            t = self.next()
            if t.kind == "eof":
                return
            if t.text == "{":
                depth += 1
            elif t.text == "}":
                depth -= 1
                if depth <= 0:
                    if depth < 0:
                        self.i -= 1
                    return
            elif t.text == ";" and depth == 0:
                return

    # ---- module level
    def parse(self) -> Module:
        version = target = None
        address_size = 64
        programs, funcs = {}, {}
        self.module_shared: list = []       # SharedVar at module scope
        self.module_globals: dict = {}
        while self.peek().kind != "eof":
            t = self.peek()
            tx = t.text
            if tx == ".version":
                self.next(); version = self.next().text
            elif tx == ".target":
                self.next()
                target = self.next().text
                while self.peek().text == ",":
                    self.next(); self.next()
            elif tx == ".address_size":
                self.next(); address_size = _parse_int(self.next().text)
            elif tx in (".file", ".loc"):
                self.skip_line()
            elif tx == ".pragma":
                self.skip_statement()
            elif tx == ".section":
                self.next(); self.next()
                if self.peek().text == "{":
                    self.skip_statement()
            elif tx in (".visible", ".extern", ".weak", ".entry", ".func", ".shared", ".global", ".const", ".common"):
                self.parse_toplevel_decl(programs, funcs)
            elif tx == ";":
                self.next()
            else:
                self.err("unexpected token at module level", t,
                         ".version/.target/.entry/.func/.shared/.global declarations")
        return Module(self.filename, version, target, address_size, programs, funcs)

    def parse_toplevel_decl(self, programs, funcs):
        quals = []
        while self.peek().text in (".visible", ".extern", ".weak", ".common"):
            quals.append(self.next().text)
        t = self.peek()
        if t.text in (".entry", ".func"):
            self.next()
            prog = self.parse_function(t.text == ".entry", ".extern" in quals)
            if prog is not None:
                (programs if t.text == ".entry" else funcs)[prog.name] = prog
            return
        if t.text in (".shared", ".global", ".const"):
            space = self.next().text[1:]
            var = self.parse_var_decl(space, extern=".extern" in quals)
            if space == "shared":
                self.module_shared.append(var)
            else:
                self.module_globals[var.name] = var
            return
        self.err("unexpected declaration", t)

    def parse_var_decl(self, space, extern=False):
        """After the state space: [.align N] [.ptr...] .type name[[N]] [= {...}] ;"""
        align, typ = None, None
        while self.peek().kind == "ident" and self.peek().text.startswith("."):
            d = self.next().text
            if d == ".align":
                align = _parse_int(self.next().text)
            elif d[1:] in _TYPE_SIZES or d[1:] in ("v2", "v4"):
                if d[1:] in _TYPE_SIZES:
                    typ = d[1:]
            # other qualifiers ignored (.ptr, .global, ...)
        name_t = self.next()
        if name_t.kind != "ident":
            self.err("expected a variable name", name_t)
        count = None
        unsized = False
        if self.peek().text == "[":
            self.next()
            if self.peek().text == "]":
                unsized = True
                self.next()
            else:
                count = _parse_int(self.next().text)
                self.expect("]")
        if typ is None:
            self.err("missing type in declaration", name_t, "e.g. .b8, .u32")
        esz = _TYPE_SIZES[typ]
        size = 0 if unsized else esz * (count or 1)
        init = None
        if self.peek().text == "=":
            self.next()
            init = []
            depth = 0
            while True:
                t = self.next()
                if t.text == "{":
                    depth += 1
                elif t.text == "}":
                    depth -= 1
                elif t.kind == "num":
                    init.append(_parse_int(t.text) if "." not in t.text else float(t.text))
                if depth == 0 and self.peek().text in (";",):
                    break
                if t.kind == "eof":
                    break
        if self.peek().text == ";":
            self.next()
        v = SharedVar(name_t.text, typ, size, align or esz, extern=extern or unsized)
        v.init = init
        return v

    # ---- functions
    def parse_function(self, is_entry, is_extern):
        # optional return params for .func: (.param .b32 r) name (...)
        ret_params = []
        if self.peek().text == "(":
            ret_params = self.parse_param_list()
        name_t = self.next()
        if name_t.kind != "ident":
            self.err("expected a function name", name_t)
        name = name_t.text
        params = self.parse_param_list() if self.peek().text == "(" else []
        maxnreg = reqntid = maxntid = None
        cluster_dirs = {}       # clusters: .reqnctapercluster X, Y, Z / .explicitcluster / .maxclusterrank N
        while self.peek().text.startswith(".") and self.peek().text != ".section":
            d = self.next().text
            vals = []
            while self.peek().kind == "num":
                vals.append(_parse_int(self.next().text))
                if self.peek().text == ",":
                    self.next()
            if d == ".maxnreg":
                maxnreg = vals[0] if vals else None
            elif d == ".reqntid":
                reqntid = tuple(vals)
            elif d == ".maxntid":
                maxntid = tuple(vals)
            elif d == ".noreturn":
                pass
            elif d == ".reqnctapercluster":
                if not 1 <= len(vals) <= 3 or min(vals) < 1:
                    self.err(".reqnctapercluster needs 1 to 3 positive dimensions", self.toks[self.i - 1])
                cluster_dirs["reqnctapercluster"] = tuple(vals) + (1,) * (3 - len(vals))
            elif d == ".explicitcluster":
                cluster_dirs["explicitcluster"] = True
            elif d == ".maxclusterrank":
                cluster_dirs["maxclusterrank"] = vals[0] if vals else None
        if self.peek().text == ";":     # prototype only
            self.next()
            return None
        if self.peek().text != "{":
            self.err("expected '{' to open the function body", self.peek())
        off = 0
        for p in params:
            off = (off + p.align - 1) // p.align * p.align
            p.offset = off
            off += p.size
        body = _Body(self, name, params)
        for q in ret_params:
            body.params[q.name] = q
        body.parse_block()
        prog = body.finish()
        _check_operand_widths(prog)
        prog.maxnreg, prog.reqntid, prog.maxntid = maxnreg, reqntid, maxntid
        for k, v in cluster_dirs.items():
            setattr(prog, k, v)
        prog.param_bytes = off
        return prog if not is_extern else None

    def parse_param_list(self):
        self.expect("(")
        params = []
        while self.peek().text != ")":
            t = self.next()
            if t.text == ",":
                continue
            if t.text not in (".param", ".reg"):
                self.err("expected .param", t)
            align, typ, is_ptr = None, None, False
            while self.peek().text.startswith(".") and self.peek().kind == "ident":
                d = self.next().text
                if d == ".align":
                    align = _parse_int(self.next().text)
                elif d == ".ptr":
                    is_ptr = True
                elif d[1:] in _TYPE_SIZES:
                    typ = d[1:]
            nt = self.next()
            if nt.kind != "ident" or typ is None:
                self.err("malformed parameter", nt, ".param .TYPE name")
            count = None
            if self.peek().text == "[":
                self.next()
                count = _parse_int(self.next().text)
                self.expect("]")
            esz = _TYPE_SIZES[typ]
            params.append(Param(nt.text, typ, esz * (count or 1), align or esz, array=count, is_ptr=is_ptr))
        self.expect(")")
        return params


class _Body:
    """Parses one function body into instructions."""

    def __init__(self, p: _Parser, name: str, params: list):
        self.p = p
        self.name = name
        self.params = {q.name: q for q in params}
        self.param_list = params
        self.reg_names: list = []
        self.reg_types: list = []
        self.scopes: list = []          # list of dicts: name -> reg index / label unique name / var
        self.scope_id = 0
        self.instructions: list = []
        self.raw: list = []             # (opcode, mods, guard, operand token-lists, line, text, scope snapshot)
        self.labels: dict = {}          # unique label name -> instruction index
        self.btargets: dict = {}        # unique name of a .branchtargets list -> its label references
        self.shared_vars: dict = {v.name: v for v in p.module_shared}
        self.local_vars: dict = {}
        self.unknown: list = []

    # scope helpers
    def lookup(self, name):
        for sc in reversed(self.scopes):
            if name in sc:
                return sc[name]
        return None

    def declare_reg(self, name, typ, line):
        sc = self.scopes[-1]
        uname = name if len(self.scopes) == 1 else f"{name}${sc['__id__']}"
        if name in sc:
            raise PTXError(f"register {name} declared twice", location=f"{self.p.filename}:{line}")
        idx = len(self.reg_names)
        self.reg_names.append(uname)
        self.reg_types.append(typ)
        sc[name] = ("reg", idx)

    def parse_block(self):
        p = self.p
        p.expect("{")
        self.scope_id += 1
        self.scopes.append({"__id__": self.scope_id})
        # collect label names of this scope lazily: labels are declared when met; forward refs resolved later
        while True:
            t = p.peek()
            if t.kind == "eof":
                p.err("unterminated function body", t, "'}'")
            if t.text == "}":
                p.next()
                self.scopes.pop()
                return
            if t.text == "{":
                self.parse_block()
                continue
            if t.text == ";":
                p.next()
                continue
            if t.kind == "ident" and p.peek(1).text == ":" and not t.text.startswith("."):
                p.next(); p.next()
                sc = self.scopes[-1]
                uname = t.text if len(self.scopes) == 1 else f"{t.text}${sc['__id__']}"
                if uname in self.labels:
                    raise PTXError(f"label {t.text} defined twice", location=f"{p.filename}:{t.line}")
                if p.peek().text in (".branchtargets", ".calltargets"):
                    self.parse_targets(t, uname)
                    continue
                if uname in self.btargets:
                    raise PTXError(f"label {t.text} defined twice", location=f"{p.filename}:{t.line}")
                sc["label:" + t.text] = uname
                self.labels[uname] = len(self.raw)
                continue
            if t.text in (".branchtargets", ".calltargets"):
                p.err(f"{t.text} needs a label naming the list", t, f"ts: {t.text} L0, L1;")
            if t.text == ".reg":
                self.parse_reg_decl()
                continue
            if t.text in (".shared", ".local"):
                p.next()
                v = p.parse_var_decl(t.text[1:])
                (self.shared_vars if t.text == ".shared" else self.local_vars)[v.name] = v
                continue
            if t.text in (".loc", ".file"):
                p.skip_line()
                continue
            if t.text in (".pragma", ".param", ".maxnreg", ".reqntid", ".maxntid"):
                p.skip_statement()
                continue
            if t.kind == "ident" and t.text.startswith(".") :
                p.err("unsupported directive in function body", t)
            self.parse_instruction()

    def parse_targets(self, name_tok, uname):
        """``ts: .branchtargets L0, L1, ...;``: the target list of ``brx.idx`` (labels may be forward)."""
        p = self.p
        d = p.next()
        if d.text == ".calltargets":
            p.err(".calltargets (indirect calls) is not supported", d, "direct call instructions")
        refs = []
        while True:
            lt = p.next()
            if lt.kind != "ident" or lt.text.startswith((".", "%")):
                p.err("expected a label in the .branchtargets list", lt, "ts: .branchtargets L0, L1, L2;")
            refs.append(_LabelRef(lt.text, lt.line, list(self.scopes)))
            s = p.next()
            if s.text == ";":
                break
            if s.text != ",":
                p.err("expected ',' or ';' in the .branchtargets list", s)
        sc = self.scopes[-1]
        if uname in self.labels or uname in self.btargets:
            raise PTXError(f"label {name_tok.text} defined twice", location=f"{p.filename}:{name_tok.line}")
        sc["targets:" + name_tok.text] = uname
        self.btargets[uname] = refs

    def parse_reg_decl(self):
        p = self.p
        t0 = p.next()
        typ = None
        while p.peek().text.startswith(".") and p.peek().kind == "ident":
            d = p.next().text[1:]
            if d in _TYPE_SIZES:
                typ = d
            elif d in ("v2", "v4"):
                p.err("vector registers are not supported", p.toks[p.i - 1])
        if typ is None:
            p.err("missing register type", t0, ".reg .b32 %r<N>;")
        while True:
            nt = p.next()
            if nt.kind != "ident":
                p.err("expected a register name", nt)
            if p.peek().text == "<":
                p.next()
                cnt = _parse_int(p.next().text)
                p.expect(">")
                for k in range(cnt):
                    self.declare_reg(f"{nt.text}{k}", typ, nt.line)
            else:
                self.declare_reg(nt.text, typ, nt.line)
            s = p.next()
            if s.text == ";":
                return
            if s.text != ",":
                p.err("expected ',' or ';' in .reg declaration", s)

    def parse_instruction(self):
        p = self.p
        first = p.peek()
        guard = None
        if first.text == "@":
            p.next()
            neg = False
            if p.peek().text == "!":
                p.next(); neg = True
            gt = p.next()
            guard = (self.reg_ref(gt), neg)
        ot = p.next()
        if ot.kind != "ident" or ot.text.startswith("%"):
            p.err("expected an instruction mnemonic", ot)
        opcode, mods = split_opcode(ot.text)
        if opcode not in KNOWN_OPCODES:
            self.unknown.append((ot.line, ot.text))
        for m in mods:
            if _TYPE_LIKE.fullmatch(m) and m not in _TYPE_SIZES and m not in _OTHER_TYPES:
                p.err(f"unknown type .{m} in {ot.text}", ot,
                      hint="a PTX type: " + ", ".join(sorted(_TYPE_SIZES)))
        operands = []
        if p.peek().text != ";":
            while True:
                operands.append(self.parse_operand())
                s = p.next()
                if s.text == ";":
                    break
                if s.text != ",":
                    p.err("expected ',' or ';' after operand", s)
        else:
            p.next()
        line = ot.line if guard is None else first.line
        text = p.lines[line - 1].strip() if line - 1 < len(p.lines) else ""
        self.raw.append((opcode, mods, guard, operands, line, text, list(self.scopes)))

    # operands are parsed into closures resolved at finish() (labels may be forward references)
    def reg_ref(self, tok):
        if tok.kind != "ident":
            self.p.err("expected a register", tok)
        r = self.lookup(tok.text)
        if r is None or r[0] != "reg":
            self.p.err(f"undefined register {tok.text}", tok, "a register declared with .reg")
        return r[1]

    def parse_operand(self):
        p = self.p
        t = p.peek()
        if t.text == "{":
            p.next()
            items = []
            if p.peek().text != "}":
                while True:
                    items.append(self.parse_operand())
                    s = p.next()
                    if s.text == "}":
                        break
                    if s.text != ",":
                        p.err("expected ',' or '}' in vector operand", s)
            else:
                p.next()
            return Vec(tuple(items))
        if t.text == "[":
            p.next()
            base, off, coords = None, 0, None
            bt = p.next()
            if bt.kind == "ident":
                base = self.name_operand(bt)
                if isinstance(base, Label):
                    p.err("label used as an address", bt)
            elif bt.kind == "num":
                off = _parse_int(bt.text)
            else:
                p.err("bad address expression", bt, "[%reg], [%reg+imm], [symbol], [imm]")
            while p.peek().text in ("+", "-"):
                sign = -1 if p.next().text == "-" else 1
                nt = p.next()
                if nt.kind != "num":
                    p.err("expected an integer offset", nt)
                off += sign * _parse_int(nt.text)
            if p.peek().text == ",":
                p.next()
                v = self.parse_operand()
                coords = v.items if isinstance(v, Vec) else (v,)
            p.expect("]", "']' closing the address")
            return Addr(base, off, coords)
        if t.text == "-":
            p.next()
            nt = p.next()
            if nt.kind != "num":
                p.err("expected a number after '-'", nt)
            v = self.number(nt)
            return Imm(-v.value, "-" + nt.text, False, v.is_float) if not v.is_float_bits else p.err("negated float bit literal", nt)
        if t.text == "!":
            p.next()
            r = self.name_operand(p.next())
            if not isinstance(r, Reg):
                p.err("'!' applies to a predicate register", t)
            return Reg(r.index, r.name, True)
        if t.kind == "num":
            p.next()
            return self.number(t)
        if t.kind == "ident":
            p.next()
            if t.text == "_":
                return Sink()
            op = self.name_operand(t)
            if p.peek().text == "|":
                p.next()
                op2 = self.name_operand(p.next())
                return Pair(op, op2)
            return op
        p.err("unexpected token in operand", t)

    def number(self, t):
        s = t.text
        if s[:2] in ("0f", "0F"):
            return Imm(int(s[2:], 16), s, True)
        if s[:2] in ("0d", "0D"):
            return Imm(int(s[2:], 16), s, True)
        if "." in s or (("e" in s or "E" in s) and not s[:2].lower() == "0x"):
            return Imm(float(s), s, False, True)
        return Imm(_parse_int(s), s)

    def name_operand(self, tok):
        name = tok.text
        if name == "_":
            return Sink()
        r = self.lookup(name)
        if r is not None and r[0] == "reg":
            return Reg(r[1], self.reg_names[r[1]])
        if name.startswith("%"):
            base = name.split(".")[0]
            if base in _SPECIAL_REGS:
                return Sym(name, "special")
            self.p.err(f"undefined register {name}", tok, "a register declared with .reg")
        if name in self.params:
            return Sym(name, "param")
        if name in self.shared_vars:
            return Sym(name, "shared")
        if name in self.local_vars:
            return Sym(name, "local")
        if name in self.p.module_globals:
            return Sym(name, "global")
        tl = self.lookup("targets:" + name)
        if tl is not None:      # a .branchtargets list declared above (ptxas refuses forward references)
            return _TargetsRef(name, tl, tok.line)
        # label (maybe forward): resolved in finish()
        return _LabelRef(name, tok.line, list(self.scopes))

    def resolve_label(self, ref):
        for sc in reversed(ref.scopes):
            if "label:" + ref.name in sc:
                return sc["label:" + ref.name]
        if ref.name in self.labels:
            return ref.name
        raise PTXError(f"undefined label or symbol {ref.name}", location=f"{self.p.filename}:{ref.line}",
                       hint="a label defined in this function, a parameter or a declared variable")

    def fix(self, op):
        if isinstance(op, _TargetsRef):
            return Targets(op.name, tuple(Label(r.name, self.labels[self.resolve_label(r)])
                                          for r in self.btargets[op.uname]))
        if isinstance(op, _LabelRef):
            if any("targets:" + op.name in sc for sc in op.scopes) or op.name in self.btargets:
                raise PTXError(f".branchtargets list {op.name} is used before it is declared",
                               location=f"{self.p.filename}:{op.line}",
                               hint="declare the list (ts: .branchtargets L0, L1;) before the brx.idx that "
                                    "uses it, as ptxas requires")
            u = self.resolve_label(op)
            return Label(op.name, self.labels[u])
        if isinstance(op, Vec):
            return Vec(tuple(self.fix(x) for x in op.items))
        if isinstance(op, Pair):
            return Pair(self.fix(op.first), self.fix(op.second))
        if isinstance(op, Addr):
            if isinstance(op.base, _LabelRef):
                raise PTXError(f"undefined symbol {op.base.name} in address",
                               location=f"{self.p.filename}:{op.base.line}",
                               hint="a register, parameter or declared variable")
            return Addr(op.base, op.offset, tuple(self.fix(c) for c in op.coords) if op.coords else None)
        return op

    def finish(self) -> Program:
        if self.unknown:
            line, text = self.unknown[0]
            listing = ", ".join(f"{t} (line {ln})" for ln, t in self.unknown[:20])
            raise PTXError(f"unknown instruction {text!r}" + (f"; all unknown: {listing}" if len(self.unknown) > 1 else ""),
                           location=f"{self.p.filename}:{line}", hint="a PTX ISA 8.x instruction mnemonic")
        # labels scanned after the labels dict got filled: collect scoped labels (already recorded in scopes)
        insts = []
        for idx, (opcode, mods, guard, operands, line, text, _sc) in enumerate(self.raw):
            ops = tuple(self.fix(o) for o in operands)
            kind, unit = classify(opcode, mods)
            if opcode == "mov" and len(ops) == 2 and isinstance(ops[1], Sym) and ops[1].space == "special" \
                    and ops[1].name.split(".")[0] in ("%clock", "%clock64", "%globaltimer", "%globaltimer_lo",
                                                      "%globaltimer_hi"):
                kind = Kind.CLOCK
            inst = Instruction(idx, line, text, opcode, mods, guard, ops, kind, unit)
            dsts, srcs = _roles(inst)
            inst.dsts, inst.srcs = dsts, srcs
            inst.width_bytes = _width(inst)
            insts.append(inst)
        # ensure branches to a label at the end (no instruction after) are valid
        n = len(insts)
        for inst in insts:
            for o in inst.operands:
                for lb in (o.labels if isinstance(o, Targets) else (o,)):
                    if isinstance(lb, Label) and lb.target >= n:
                        raise PTXError(f"label {lb.name} is not followed by an instruction",
                                       location=f"{self.p.filename}:{inst.line}")
            _check_brx(inst, self.p.filename)
        # shared layout as ptxas does it per entry: only the module-scope shared variables this function
        # references (a module with several kernels declares every kernel's variables at module scope; nvcc
        # names a second `buf` `buf$1`), copied so entries do not share offsets; static vars first, extern
        # (dynamic) ones all at the aligned start of dynamic shared memory.
        module_names = {v.name for v in self.p.module_shared}
        if any(i.opcode == "call" for i in insts):
            used = set(module_names)          # a called .func may reach any of them: keep them all
        else:
            used = set()
            for i in insts:
                for o in i.operands:
                    _shared_syms(o, used)
        self.shared_vars = {k: (copy.copy(v) if k in module_names else v) for k, v in self.shared_vars.items()
                            if k not in module_names or k in used}
        off = 0
        for v in self.shared_vars.values():
            if not v.extern:
                off = (off + v.align - 1) // v.align * v.align
                v.offset = off
                off += v.size
        static = off
        dyn = (static + 15) // 16 * 16 if static else 0
        for v in self.shared_vars.values():
            if v.extern:
                dyn = (dyn + v.align - 1) // v.align * v.align
                v.offset = dyn
        prog = Program(self.name, self.p.filename, insts, self.reg_names, self.reg_types, self.param_list,
                       static_shared_bytes=static, shared_vars=dict(self.shared_vars), dynamic_smem_offset=dyn,
                       global_vars=dict(self.p.module_globals),
                       labels={k: v for k, v in self.labels.items()})
        prog.local_vars = dict(self.local_vars)
        return prog


class _LabelRef:
    __slots__ = ("name", "line", "scopes")

    def __init__(self, name, line, scopes):
        self.name, self.line, self.scopes = name, line, scopes


class _TargetsRef:
    """A reference to a .branchtargets list declared above; its labels are resolved in finish()."""
    __slots__ = ("name", "uname", "line")

    def __init__(self, name, uname, line):
        self.name, self.uname, self.line = name, uname, line


_SPECIAL_REGS = {"%tid", "%ntid", "%ctaid", "%nctaid", "%laneid", "%warpid", "%nwarpid", "%smid", "%nsmid",
                 "%gridid", "%clock", "%clock64", "%globaltimer", "%globaltimer_lo", "%globaltimer_hi",
                 "%lanemask_eq", "%lanemask_lt", "%lanemask_le", "%lanemask_gt", "%lanemask_ge",
                 "%dynamic_smem_size", "%total_smem_size", "%cluster_ctarank", "%cluster_nctarank",
                 "%clusterid", "%nclusterid", "%cluster_ctaid", "%cluster_nctaid", "%is_explicit_cluster",
                 "%envreg0", "%pm0"}


def _check_brx(inst, filename) -> None:
    """``brx.idx{.uni} index, tlist`` with tlist a .branchtargets list; a list used anywhere else is an error."""
    loc = f"{filename}:{inst.line}"
    ops = inst.operands
    if inst.opcode == "brx":
        if "idx" not in inst.mods:
            raise PTXError(f"brx needs .idx: {inst.text}", location=loc, hint="brx.idx{.uni} index, tlist;")
        if len(ops) != 2 or not isinstance(ops[1], Targets) or not isinstance(ops[0], (Reg, Imm)):
            raise PTXError(f"brx.idx takes an index and a .branchtargets list: {inst.text}", location=loc,
                           hint="ts: .branchtargets L0, L1; brx.idx %r1, ts;")
        return
    for o in ops:
        if isinstance(o, Targets):
            raise PTXError(f".branchtargets list {o.name} used by {inst.opcode} (only brx.idx takes one)",
                           location=loc, hint="bra LABEL, or brx.idx index, tlist")


def _shared_syms(op, out: set):
    if isinstance(op, Sym):
        if op.space == "shared":
            out.add(op.name)
    elif isinstance(op, Vec):
        for x in op.items:
            _shared_syms(x, out)
    elif isinstance(op, Pair):
        _shared_syms(op.first, out); _shared_syms(op.second, out)
    elif isinstance(op, Addr):
        _shared_syms(op.base, out)


def _regs_of(op, out):
    if isinstance(op, Reg):
        out.append(op.index)
    elif isinstance(op, Vec):
        for x in op.items:
            _regs_of(x, out)
    elif isinstance(op, Pair):
        _regs_of(op.first, out); _regs_of(op.second, out)
    elif isinstance(op, Addr):
        if isinstance(op.base, Reg):
            out.append(op.base.index)
        if op.coords:
            for c in op.coords:
                _regs_of(c, out)


def _roles(inst):
    ops = inst.operands
    dsts, srcs = [], []
    if inst.guard is not None:
        srcs.append(inst.guard[0])
    if not ops:
        return (), tuple(srcs)
    if inst.opcode in NO_DST or inst.kind in (Kind.ST_GLOBAL, Kind.ST_SHARED, Kind.ST_LOCAL):
        for o in ops:
            _regs_of(o, srcs)
    else:
        _regs_of(ops[0], dsts)
        for o in ops[1:]:
            _regs_of(o, srcs)
        if inst.opcode == "wgmma.mma_async":
            _regs_of(ops[0], srcs)      # accumulator is read and written
        if isinstance(ops[0], Addr):     # address operand in dst position is a source
            srcs.extend(dsts); dsts = []
    return tuple(dict.fromkeys(dsts)), tuple(dict.fromkeys(srcs))


def _width(inst):
    if inst.kind not in (Kind.LD_GLOBAL, Kind.ST_GLOBAL, Kind.ATOM_GLOBAL, Kind.LD_SHARED, Kind.ST_SHARED,
                         Kind.ATOM_SHARED, Kind.LD_PARAM, Kind.LD_LOCAL, Kind.ST_LOCAL, Kind.CP_ASYNC,
                         Kind.LDMATRIX, Kind.STMATRIX):
        return 0
    if inst.kind == Kind.CP_ASYNC:
        for o in inst.operands[2:3]:
            if isinstance(o, Imm):
                return int(o.value)
        return 16
    if inst.kind in (Kind.LDMATRIX, Kind.STMATRIX):
        n = 4 if "x4" in inst.mods else 2 if "x2" in inst.mods else 1
        return 4 * n
    vec = 4 if "v4" in inst.mods else 2 if "v2" in inst.mods else 8 if "v8" in inst.mods else 1
    t = [m for m in inst.mods if m in _TYPE_SIZES]
    sz = _TYPE_SIZES[t[-1]] if t else 4
    return vec * sz


# Plain ALU instructions whose register operands all have the instruction type's size (PTX ISA "Operand Type
# Information": ptxas rejects e.g. `add.s64 %r1, ...` with a .b32 %r1). A conservative subset: opcodes whose
# every register operand is of the instruction type (no .wide / .hi-lo mixing, shifts, predicates, conversions).
_SAME_WIDTH_OPS = {"add", "sub", "min", "max", "and", "or", "xor", "not", "neg", "abs", "mov"}
_REG_SIZE = {"pred": 0, "b1": 0}


def _check_operand_widths(prog) -> None:
    for ins in prog.instructions:
        if ins.opcode not in _SAME_WIDTH_OPS or any(m in ("wide", "hi", "cc") for m in ins.mods):
            continue
        types = [m for m in ins.mods if m in _TYPE_SIZES]
        if len(types) != 1 or types[0] == "pred":
            continue
        want = _TYPE_SIZES[types[0]]
        for o in ins.operands:
            if not isinstance(o, Reg):
                continue
            rt = str(prog.reg_types[o.index]).lstrip(".")
            have = _TYPE_SIZES.get(rt)
            if have is None or rt == "pred":
                continue
            if have != want:
                raise PTXError(f"operand {o.name} is a .{rt} register ({have * 8} bits) but {ins.opcode}.{types[0]} "
                               f"needs {want * 8}-bit operands", location=prog.location(ins.index),
                               hint=f"a .{types[0]}-sized register (declare it with .reg .b{want * 8})")


def parse_ptx(text: str, filename: str = "kernel.ptx") -> Module:
    """Parse PTX text into a :class:`Module`; raises :class:`PTXError` naming ``filename:LINE`` (also for malformed
    input the parser did not anticipate: never a raw exception)."""
    p = None
    try:
        p = _Parser(text, filename)
        return p.parse()
    except PTXError:
        raise
    except RecursionError:
        line = p.peek().line if p is not None and getattr(p, "toks", None) else 1
        raise PTXError("PTX nested too deeply", location=f"{filename}:{line}", hint="well-formed PTX") from None
    except (ValueError, TypeError, IndexError, KeyError, AttributeError, OverflowError, struct.error) as e:
        line = p.peek().line if p is not None and getattr(p, "toks", None) else 1
        raise PTXError(f"malformed PTX ({type(e).__name__}: {e})", location=f"{filename}:{line}",
                       hint="PTX as the ISA defines it (an operand, type or directive is out of place)") from None


TYPE_SIZES = _TYPE_SIZES
