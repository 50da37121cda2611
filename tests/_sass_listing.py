"""Shared by the SASS-fact tests: a tiny ``nvdisasm -g`` listing of entry ``k`` from instruction texts."""
from warpgraph.workloads import sass as SS

_HEAD = ("//--------------------- .text.k                  --------------------------\n"
         '\t.section\t.text.k,"ax",@progbits\nk:\n.text.k:\n')


def listing(*ops: str) -> tuple:
    """The SassInsts of ``ops`` (one instruction each, 16 bytes apart) as :func:`SS.parse_nvdisasm` reads them."""
    body = "".join(f"        /*{16 * k:04x}*/                   {op} ;\n" for k, op in enumerate(ops))
    return tuple(SS.parse_nvdisasm(_HEAD + body + "//--------------------- .nv.info\n", "k"))
