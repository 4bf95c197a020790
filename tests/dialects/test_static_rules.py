"""The static rules: what honest Triton candidates write must pass; cheat vectors must not."""

from __future__ import annotations

import pytest

from evotui.dialects.triton.static_rules import check_source

HEAD = "import torch\nimport torch.nn as nn\nimport triton\nimport triton.language as tl\n"


def verdict(body: str, head: str = HEAD) -> str | None:
    source = head + body + "\n\nclass ModelNew(nn.Module):\n    pass\n"
    issue = check_source(source)
    return None if issue is None else issue.reason


@pytest.mark.parametrize("body", [
    "from triton.language.extra import libdevice\ny = libdevice.tanh",
    "y = tl.extra.cuda.libdevice.erf",
    "y = tl.math.erf",
    "from triton.runtime import driver\nn = driver.active.utils.get_device_properties(0)['multiprocessor_count']",
    "n = torch.cuda.get_device_properties(0).multi_processor_count",
    "d = torch.cuda.current_device()",
    "class K:\n    def __init__(self):\n        self._cache = {}\n        self._cache['a'] = 1",
    "x = torch.empty(4, device='cuda')\nok = x.is_cuda and x.is_contiguous()",
    "y = torch.zeros(3).cuda()",
    "import math\nfrom typing import Optional\nz = math.sqrt(2)",
    "@triton.autotune(configs=[triton.Config({'B': 64}, num_warps=4)], key=['n'])\n"
    "@triton.jit\ndef k(x, n, B: tl.constexpr):\n    pass",
    "if __name__ == '__main__':\n    print('debug')",
    "from triton.tools.tensor_descriptor import TensorDescriptor\n"
    "d = TensorDescriptor.from_tensor(torch.empty(16, 16), [16, 16])",
    "import triton.tools.tensor_descriptor as td\nd = td.TensorDescriptor.from_tensor",
    "from typing import NamedTuple\nclass C(NamedTuple):\n    block: int = 64",
    "import enum\nclass E(enum.IntEnum):\n    A = 1",
    "from dataclasses import dataclass\n@dataclass\nclass C:\n    block: int = 64",
    "class L(nn.Linear):\n    pass\nclass M(L):\n    pass",
    "class Cfg(dict):\n    pass",
    "import itertools, functools, math\nz = functools.reduce(max, itertools.chain([1], [math.ceil(2.5)]))",
    "from typing import Optional, Literal\nx: Optional[Literal['row', 'tile']] = None",
    "def f(x: torch.Tensor, n: int = 3) -> torch.Tensor:\n    return x",
    # module constants a kernel reads (Triton wants them as tl.constexpr)
    "import math\nC = tl.constexpr(math.log2(math.e))\n@triton.jit\ndef k(x):\n    y = x * C",
    "from math import pi\nC = tl.constexpr(pi / 4)\n@triton.jit\ndef k(x):\n    y = x * C",
    "C = tl.constexpr(float('-inf'))\n@triton.jit\ndef k(x):\n    y = x + C",
    "B = 1024\nH = tl.constexpr(B // 2)\n@triton.jit\ndef k(x):\n    y = x + H",
    "E = tl.constexpr(torch.finfo(torch.float32).eps)\n@triton.jit\ndef k(x):\n    y = x + E",
    "V = int(triton.__version__.split('.')[0]) >= 3\nT = torch.__version__",
    # config dicts, a parameter named like a builtin, NamedTuple configs
    "DEFAULTS = {'B': 64}\ncfg = DEFAULTS.copy()",
    "def f(input):\n    return input",
    "from typing import NamedTuple\nclass C(NamedTuple):\n    b: int = 1\nc = C()._replace(b=2)",
    "x = torch.compiler.is_compiling()",
    "if __name__ == '__main__':\n    torch.manual_seed(0)",
    "class K:\n    @staticmethod\n    @triton.jit\n    def k(x):\n        pass",
    "DEFAULT_BLOCK = 1024\n@triton.jit\ndef k(x, BLOCK: tl.constexpr = DEFAULT_BLOCK):\n    pass",
    "B = 1024\nSUB = tl.constexpr(B // 2)\n@triton.jit\ndef k(x, B: tl.constexpr):\n    y = SUB",
    "F64 = 0\nACC = tl.float64 if F64 else tl.float32\n@triton.jit\ndef k(x):\n    y = x.to(ACC)",
    "ON_GPU = tl.constexpr(torch.cuda.is_available())\n@triton.jit\ndef k(x):\n    y = ON_GPU",
    "import math\nlibdevice = tl.extra.cuda.libdevice\nM = math\nL = nn.Linear\nk = type(3)",
    # the dunders a file needs, `super()` (its `__class__` cell), math constants and plain
    # annotations in a kernel, a global bound later
    "__all__ = ['ModelNew']\n__version__ = '1'\nclass C:\n    __slots__ = ('a',)\n"
    "    def __init__(self):\n        super().__init__()\n    def __call__(self, meta):\n"
    "        return (1,)",
    "from dataclasses import dataclass\n@dataclass\nclass C:\n    b: int = 1\n"
    "    def __post_init__(self):\n        assert self.b > 0",
    "import math\n@triton.jit\ndef k(x, n: int, B: tl.constexpr, s: 'i32'):\n"
    "    y = x * math.pi",
    "def f():\n    return LATER + 1\nLATER = 2",
    "class C:\n    def name(self):\n        return type(self).__name__",
    # a getattr with a constant public name, the abstract container types, a str enum,
    # nn.Linear's own reset_parameters helper
    "b = getattr(nn.Linear(2, 2), 'bias', None)",
    "from collections.abc import Sequence\ndef f(x: Sequence[int]):\n    return x",
    "import enum\nclass R(str, enum.Enum):\n    MEAN = 'mean'",
    "fan_in, _ = nn.init._calculate_fan_in_and_fan_out(torch.empty(2, 2))",
    "class B(nn.Module):\n    def forward(self, x):\n        self.n = 1\n        return x\n"
    "class C(B):\n    def forward(self, x):\n        return B.forward(self, x)",
    "class L(nn.Linear):\n    def __init__(self):\n        super().__init__(2, 2)\n"
    "class M(L):\n    def __init__(self):\n        L.__init__(self)",
    "class F(torch.autograd.Function):\n    @staticmethod\n    def forward(ctx, x, eps):\n"
    "        ctx.eps = eps\n        ctx.save_for_backward(x)\n        return x\n"
    "y = F.apply(torch.ones(1), 1e-6)",
    "if torch.cuda.is_available():\n    DEVICE = 'cuda'\nelse:\n    DEVICE = 'cpu'\n"
    "def f():\n    return DEVICE",
    "@triton.jit\ndef k(x, B: tl.constexpr = 2 ** 10, S: tl.constexpr = 1 << 4,\n"
    "      N: tl.constexpr = float('-inf')):\n    pass",
    # what kernel libraries and models write: `triton.jit(fn)` called, the decorators as calls
    "def f(x):\n    return x\ng = triton.jit(f)",
    "def f(x, B: tl.constexpr):\n    pass\n"
    "k = triton.autotune(configs=[triton.Config({'B': 64})], key=[])(triton.jit(f))",
    "def f(x, eps):\n    pass\nk = triton.jit(f, do_not_specialize=['eps'])",
    "def _g(x):\n    return x * 2\ng = triton.jit(_g)\n@triton.jit\ndef k(x):\n    y = g(x)",
    # a decorator built with functools.wraps
    "import functools\ndef deco(fn):\n    @functools.wraps(fn)\n    def w(*a):\n"
    "        return fn(*a)\n    return w",
    "from functools import wraps\ndef deco(fn):\n    @wraps(fn)\n    def w(*a):\n"
    "        return fn(*a)\n    return w",
    # a `try` that chooses between imports
    "try:\n    from triton.language.extra.libdevice import rsqrt\n"
    "except ModuleNotFoundError:\n    from triton.language.extra.cuda.libdevice import rsqrt\n"
    "@triton.jit\ndef k(x):\n    y = rsqrt(x)",
    # harmless standard-library helpers
    "import contextlib, logging, random, time, warnings\nlogger = logging.getLogger(__name__)\n"
    "c = contextlib.nullcontext()\nt = time.perf_counter()\nr = random.randint(1, 2)\n"
    "warnings.warn('slow path')\n@contextlib.contextmanager\ndef guard():\n    yield",
    # device queries for other backends, mixed-precision and compiler decorators
    "x = hasattr(torch, 'xpu') and torch.xpu.is_available()\nm = torch.backends.mps.is_available()\n"
    "d = torch.xpu.device\nc = torch.cuda.get_device_capability",
    "@torch.compiler.disable\ndef f(x):\n    return x",
    "class F(torch.autograd.Function):\n    @staticmethod\n"
    "    @torch.amp.custom_fwd(device_type='cuda')\n    def forward(ctx, x):\n        return x",
    "from torch.cuda.amp import custom_fwd, custom_bwd",
    # a kernel calling module-level aliases of Triton functions
    "triton_tanh = tl.extra.cuda.libdevice.tanh\ncast = tl.cast\n@triton.jit\ndef k(x):\n"
    "    y = cast(triton_tanh(x), tl.float32)",
    # the `__main__` self-test's helpers never run in the harness
    "def run_tests():\n    torch.manual_seed(0)\n    check()\ndef check():\n    torch.manual_seed(1)\n"
    "if __name__ == '__main__':\n    run_tests()",
    # what only the sandbox needs to contain: an environment flag (the environment is
    # scrubbed), paths read, a logger's level, a debugger hook, SystemExit, a memoryview
    "import os\nDEBUG = os.environ.get('KERNEL_DEBUG', '0') == '1' or 'CI' in os.environ\n"
    "V = os.getenv('V')\nN = os.cpu_count()\nP = os.path.join(os.path.dirname('a/b'), 'c')",
    "from os import environ, path\nF = environ.get('F')\nP = path.exists('x')",
    "import os.path\nP = os.path.isfile('x')",
    "from pathlib import Path\ndef load(p):\n    return Path(p).read_text()\n"
    "HERE = Path('a').parent",
    "import logging\nlogging.basicConfig(level=logging.INFO)",
    "def stop():\n    breakpoint()\n    exit(1)\nm = memoryview(b'ab')",
])
def test_honest_code_passes(body):
    assert verdict(body) is None


@pytest.mark.parametrize(("body", "reason"), [
    ("s = torch.cuda.Stream()", "forbidden_attribute"),
    ("c = torch.cuda\ns = c.Stream()", "forbidden_attribute"),
    ("torch.cuda.synchronize()", "forbidden_attribute"),
    ("from torch import cuda", "forbidden_import"),
    ("g = torch.cuda.CUDAGraph()", "forbidden_attribute"),
    ("f = torch.compile(lambda x: x)", "forbidden_attribute"),
    ("p = torch.utils.cpp_extension", "forbidden_attribute"),
    ("import triton.testing", "forbidden_import"),
    ("from triton.tools import disasm", "forbidden_import"),
    ("import triton.tools.tensor_descriptor as td\nb = td.validate_block_shape", "forbidden_attribute"),
    ("from triton.runtime import jit\nj = jit.JITFunction", "forbidden_import"),
    ("from triton.runtime import driver\ndriver.active.get_current_stream()", "forbidden_attribute"),
    ("t = torch._C", "forbidden_attribute"),
    ("x = torch.empty(1)\np = x.data_ptr()", "forbidden_attribute"),
    ("x = torch.empty(1)\nb = x._base", "forbidden_attribute"),
    ("k = tl.program_id\nk.__wrapped__ = None", "forbidden_construct"),
    ("f = torch.nn.functional\nf.softmax = None", "forbidden_construct"),
    ("class P:\n    pass\nP.run = print", "forbidden_construct"),
    ("torch.manual_seed(0)", "forbidden_attribute"),
    # a file descriptor written: the worker's answer is a pipe in the candidate's process
    ("import os\nos.write(5, b'{}')", "forbidden_attribute"),
    ("from os import write", "forbidden_import"),
    ("import os\nw = os.fdopen", "forbidden_attribute"),
    ("import os\nos.path.os.write(5, b'{}')", "forbidden_attribute"),
    ("from pathlib import Path\nPath('/proc/self/fd/5').write_text('{}')", "forbidden_attribute"),
    ("from pathlib import Path\nf = Path('/proc/self/fd/5').open('w')", "forbidden_attribute"),
    ("import logging\nlogging.basicConfig(filename='/proc/self/fd/5')", "forbidden_call"),
    ("import logging\nlogging.basicConfig(**{'filename': '/proc/self/fd/5'})", "forbidden_call"),
    ("import logging\nlogging.basicConfig(**dict(filename='/proc/self/fd/5'))", "forbidden_call"),
    ("@triton.autotune(configs=[], key=[], **{'do_bench': len})\n@triton.jit\ndef k(x):\n"
     "    pass", "forbidden_call"),
    ("f = open('/proc/self/fd/5', 'w')", "forbidden_call"),
    ("import subprocess", "forbidden_import"),
    ("import threading", "forbidden_import"),
    # the environment only read (it steers Triton and torch while the harness runs)
    ("import os\nos.environ['TRITON_INTERPRET'] = '0'", "forbidden_attribute"),
    ("import os\nos.environ.update(TRITON_INTERPRET='0')", "forbidden_attribute"),
    ("import os\nenv = os.environ\nenv['X'] = '1'", "forbidden_attribute"),
    ("from os import environ\nenviron.setdefault('X', '1')", "forbidden_attribute"),
    ("import os\nos.putenv('X', '1')", "forbidden_attribute"),
    ("import numpy as np", "forbidden_import"),
    ("x = getattr(torch, 'cuda')", "forbidden_call"),
    ("e = eval", "forbidden_call"),
    ("b = __builtins__", "forbidden_attribute"),
    ("class S:\n    __exit__ = lambda self, *a: True", "forbidden_construct"),
    ("class S:\n    __annotations__ = {'x': 'print(1)'}", "forbidden_construct"),
    ("def h(a: 'list[\"x\"]'):\n    pass", "forbidden_construct"),
    ("from typing import get_type_hints", "forbidden_import"),
    ("import functools\nf = functools.singledispatch", "forbidden_attribute"),
    ("T = torch.Tensor\nclass S(T):\n    pass", "forbidden_construct"),
    ("class P(nn.Parameter):\n    pass", "forbidden_construct"),
    # the allowed standard-library modules, by name
    ("import enum\nb = enum.bltns", "forbidden_attribute"),
    ("from collections import abc\ns = abc.sys", "forbidden_attribute"),
    ("from collections.abc import ByteString", "forbidden_import"),
    ("from collections import abc\nm = abc", "forbidden_construct"),
    ("import dataclasses\nC = dataclasses.make_dataclass", "forbidden_attribute"),
    # module constants a kernel reads: numbers only, from what the file does not rebind
    ("class O:\n    pass\nC = 1.0\nC = O()\n@triton.jit\ndef k(x):\n    y = x * C", "forbidden_construct"),
    ("import math\nclass O:\n    pass\nmath = O()\nC = tl.constexpr(math.pi)\n@triton.jit\ndef k(x):\n    y = x * C",
     "forbidden_construct"),
    ("class O:\n    pass\nfloat = O\nC = float(1)\n@triton.jit\ndef k(x):\n    y = x * C", "forbidden_construct"),
    ("import math\nclass O:\n    pass\nC = tl.constexpr(math.floor(O()))\n@triton.jit\ndef k(x):\n    y = x * C", "forbidden_construct"),
    ("class O:\n    pass\nB = 2\nfor B in [O()]:\n    pass\nC = tl.constexpr(B)\n@triton.jit\ndef k(x):\n    y = x * C",
     "forbidden_construct"),
    ("class O:\n    pass\nC = tl.constexpr(torch.finfo(O()).eps)\n@triton.jit\ndef k(x):\n    y = x * C", "forbidden_construct"),
    # `triton.jit(fn)` only at the top level, on a top-level def without decorators bound once
    # (its body checked as a kernel's), with constant options
    ("def f(x):\n    return torch.softmax(x, 0)\ng = triton.jit(f)", "forbidden_call"),
    ("def f(x):\n    return x\ndef g():\n    return triton.jit(f)", "forbidden_construct"),
    ("k = triton.jit(lambda x: x)", "forbidden_construct"),
    ("class C:\n    def f(self):\n        pass\nk = triton.jit(C.f)", "forbidden_construct"),
    ("def f(x):\n    return x\nf2 = f\nk = triton.jit(f2)", "forbidden_construct"),
    ("def f(x):\n    return x\nk = triton.jit(f, repr=len)", "forbidden_construct"),
    ("import functools\n@functools.lru_cache\ndef f(x):\n    return x\nk = triton.jit(f)",
     "forbidden_construct"),
    ("def f(x):\n    return x\nk = triton.jit(f)\ndef f(x):\n    return 2", "forbidden_construct"),
    ("def f(x):\n    return x\nk = [triton.jit(f)]", "forbidden_construct"),
    ("J = triton.jit\n@J\ndef f(x):\n    return x", "forbidden_construct"),
    ("V = torch.__version__.__class__", "forbidden_attribute"),
    # files mapped as storages, threads running torch unwatched, a tuner's benchmark
    # function run with the policy off
    ("s = torch.UntypedStorage.from_file('/tmp/x', True, 4)", "forbidden_attribute"),
    ("S = torch.FloatStorage", "forbidden_attribute"),
    ("from torch import ByteStorage", "forbidden_import"),
    ("y = nn.parallel.parallel_apply", "forbidden_attribute"),
    ("y = torch.compiler.compile", "forbidden_attribute"),
    ("@triton.autotune(configs=[], key=[], do_bench=len)\n@triton.jit\ndef k(x):\n    pass",
     "forbidden_call"),
    # the self-test block is skipped only when it cannot run
    ("__name__ = '__main__'\nif __name__ == '__main__':\n    torch.manual_seed(0)",
     "forbidden_construct"),
    ("D = {}\ny = D.copy.types.FunctionType", "forbidden_attribute"),
    # `match` binds names (`case __name__:`) and reads attributes by keyword
    ("match torch:\n    case object(utils=u):\n        pass", "forbidden_construct"),
    ("y = nn.modules.transformer.copy.dispatch_table", "forbidden_attribute"),
    # a module held as a value (its chains escape the path rules); `type` as one
    ("T = torch\nI = T.package", "forbidden_construct"),
    ("x = [torch][0]", "forbidden_construct"),
    ("def f(T=torch):\n    return T", "forbidden_construct"),
    ("N = torch.nn.functional", "forbidden_construct"),
    ("T = type", "forbidden_construct"),
    ("C = type(type)('C', (int,), {})", "forbidden_call"),
    # `tl.extra.modules` is sys.modules, `tl.extra.spec` a module spec (its loader
    # reads any file), `tl.core.knobs` is triton.knobs
    ("m = tl.extra.modules['os']", "forbidden_attribute"),
    ("d = tl.extra.spec.loader.get_data('/etc/hostname')", "forbidden_attribute"),
    ("k = tl.core.knobs", "forbidden_attribute"),
    # a jit function's globals (and builtins), annotations evaluated as code,
    # torch.save's zip writer, stdlib modules reached through torch
    ("g = tl.bitonic_merge.used_global_vals", "forbidden_attribute"),
    ("k = tl.bitonic_merge.cache_key", "forbidden_attribute"),
    ("s = triton.cdiv.signature", "forbidden_attribute"),
    ("def f(x: b'int'.decode()):\n    return x", "forbidden_construct"),
    ("def f(x):\n    return x\nh = triton.Config.__init__(f, eval_str=True)", "forbidden_call"),
    ("w = torch.PyTorchFileWriter('/tmp/x')", "forbidden_attribute"),
    ("o = torch.functional.operator.setitem", "forbidden_attribute"),
    # dunders bound by any means; names read as globals that only a parameter
    # binds; torch as a value or called through a subscript in a kernel; interpreter
    # internals; a kernel annotation that is an object; from-imports judged as attributes;
    # TorchScript from a string; a private module under a public name
    ("class C:\n    for __eq__ in (len,):\n        pass", "forbidden_construct"),
    ("class C:\n    @property\n    def __class__(self):\n        return int", "forbidden_construct"),
    ("def __getattr__(name):\n    return name", "forbidden_construct"),
    ("import functools as __builtins2__", "forbidden_construct"),
    ("class C:\n    _evotui_watched = True", "forbidden_construct"),
    ("def _unused(np=None):\n    pass\ndef f():\n    return np.zeros(1)", "forbidden_construct"),
    ("@triton.jit\ndef k(x):\n    f = torch.softmax", "forbidden_construct"),
    ("@triton.jit\ndef k(x):\n    y = (tl.exp,)[0](x)", "forbidden_call"),
    ("@triton.jit\ndef k(x):\n    y = x.handle", "forbidden_attribute"),
    ("class N:\n    pass\n@triton.jit\ndef k(x: N):\n    pass", "forbidden_construct"),
    ("from triton.language.extra import modules as m", "forbidden_import"),
    ("from torch import glob as g", "forbidden_import"),
    ("from torch.nn.functional import dataclasses as d", "forbidden_import"),
    ("from triton import compile as c", "forbidden_import"),
    ("u = torch.CompilationUnit()", "forbidden_attribute"),
    ("p = tl.core.ir.parse_mlir_module", "forbidden_attribute"),
    ("i = tl.core.ir", "forbidden_attribute"),
    ("C = tl.core\np = C.ir.parse_mlir_module", "forbidden_attribute"),  # no path to judge
    # getattr only as a plain read: a constant public name, not on a module
    ("o = getattr(torch, 'nn').parallel.parallel_apply", "forbidden_call"),
    ("n = 'cuda'\no = getattr(nn.Linear(1, 1), n)", "forbidden_call"),
    ("o = getattr(nn.Linear(1, 1), '_parameters')", "forbidden_call"),
    ("o = getattr(nn.Linear(1, 1), 'register_forward_hook')", "forbidden_call"),
    ("class I(int):\n    pass", "forbidden_construct"),
    ("class E:\n    pass\nfloat = E\n@triton.jit\ndef k(x, N=float('-inf')):\n    pass",
     "forbidden_construct"),
    ("D = {}\n@triton.jit\ndef k(x, B=D or 1):\n    pass", "forbidden_construct"),
    # an autograd Function's `ctx` is its own only when nothing but `.apply` calls it
    ("class F(torch.autograd.Function):\n    @staticmethod\n    def forward(ctx, x):\n"
     "        ctx.detach = x\n        return x\ny = F.forward(torch.Tensor, 1)", "forbidden_construct"),
    ("class F(torch.autograd.Function):\n    @staticmethod\n    def forward(ctx, x):\n"
     "        ctx.a.b = x\n        return x\ny = F.apply(1)", "forbidden_construct"),
    ("y = torch.autograd.grad", "forbidden_attribute"),
    ("class F(torch.autograd.Function):\n    @staticmethod\n    def forward(ctx, c, f):\n"
     "        ctx = c\n        ctx.detach = f\n        return f\ny = F.apply(torch.Tensor, len)",
     "forbidden_construct"),
    ("class F(torch.autograd.Function):\n    @staticmethod\n    def forward(ctx, x):\n"
     "        def put(ctx, f):\n            ctx.clone = f\n        return x\ny = F.apply(1)",
     "forbidden_construct"),
    ("d = nn.Linear(1, 1)\nd.__init__(2, 2)", "forbidden_attribute"),
    ("class P:\n    data_ptr = property(len)", "forbidden_construct"),
    # `self` trusted only in a method of the file's own class, on an instance
    ("def put(self, f):\n    self.new_empty = f\nput(torch.Tensor, len)", "forbidden_construct"),
    ("class P:\n    def put(self, f):\n        self.new_empty = f\nP.put(torch.Tensor, len)",
     "forbidden_construct"),
    ("class P:\n    @staticmethod\n    def put(self, f):\n        self.new_empty = f",
     "forbidden_construct"),
    ("def g(self):\n    return self._C", "forbidden_attribute"),
    ("class P:\n    def stream(self):\n        return 0", "forbidden_construct"),
    # a name the interpreter puts into the module, bound only where it may never run
    ("if False:\n    np = 1\ndef f():\n    return np.zeros(1)", "forbidden_construct"),
    ("np = 1\ndel np\ndef f():\n    return np.zeros(1)", "forbidden_construct"),
    ("f = lambda a=np: a\ndef g(np=None):\n    pass", "forbidden_construct"),
    # a default or a constant that is an object after all
    ("D = {}\n@triton.jit\ndef k(x, B=D):\n    pass", "forbidden_construct"),
    ("C = 2\n@triton.jit\ndef k(x, B=C):\n    pass\nC = nn.Linear(1, 1)", "forbidden_construct"),
    ("X = torch.cuda.is_available\n@triton.jit\ndef k(x):\n    y = X", "forbidden_construct"),
    ("C = 1.0 if nn.Linear(1, 1) else 2.0\n@triton.jit\ndef k(x):\n    y = C",
     "forbidden_construct"),
    # what Triton's compiler refuses on a GPU: a kernel reading a plain module global
    ("from math import pi\n@triton.jit\ndef k(x):\n    y = x * pi", "forbidden_construct"),
    ("S = 2.0\n@triton.jit\ndef k(x):\n    y = x * S", "forbidden_construct"),
    ("import math\nS = math.sqrt(2.0)\n@triton.jit\ndef k(x):\n    y = x / S", "forbidden_construct"),
    ("B = 64\n@triton.jit\ndef k(x):\n    y = tl.arange(0, B)", "forbidden_construct"),
    # functools.wraps only as `@wraps(fn)` on a def nested in the function taking `fn`
    ("import functools\nw = functools.wraps(len)", "forbidden_attribute"),
    ("import functools\nclass C:\n    def __init__(self):\n        functools.wraps(len)(self)",
     "forbidden_attribute"),
    ("import functools\ndef deco(fn):\n    fn = len\n    @functools.wraps(fn)\n    def w():\n"
     "        pass\n    return w", "forbidden_attribute"),
    ("import functools\ndef deco(fn):\n    @functools.wraps(len)\n    def w():\n        pass\n"
     "    return w", "forbidden_attribute"),
    ("from functools import wraps as W\nu = W", "forbidden_attribute"),
    ("import functools\nu = functools.update_wrapper", "forbidden_attribute"),
    # a `try` only around imports, catching import errors, with no fallback code
    ("try:\n    import math\n    x = 1\nexcept ImportError:\n    pass", "forbidden_construct"),
    ("try:\n    import math\nexcept Exception:\n    pass", "forbidden_construct"),
    ("try:\n    import math\nexcept ImportError as e:\n    pass", "forbidden_construct"),
    ("try:\n    import math\nfinally:\n    pass", "forbidden_construct"),
    ("try:\n    import numpy\nexcept ImportError:\n    pass", "forbidden_import"),
    # the standard-library helpers by their name lists
    ("import contextlib\ns = contextlib.suppress", "forbidden_attribute"),
    ("import contextlib\ns = contextlib.ExitStack", "forbidden_attribute"),
    ("import logging\nh = logging.FileHandler", "forbidden_attribute"),
    ("from logging import os", "forbidden_import"),
    ("import logging\nh = logging.sys", "forbidden_attribute"),
    # device modules: queries only
    ("x = torch.xpu.synchronize()", "forbidden_attribute"),
    ("s = torch.xpu.Stream", "forbidden_attribute"),
    ("m = torch.xpu", "forbidden_attribute"),
    ("n = 'xpu'\nx = hasattr(torch, n)", "forbidden_construct"),
    ("def hasattr(m, n):\n    return m\nx = hasattr(torch, 'xpu')", "forbidden_construct"),
    ("c = torch.compiler.compile", "forbidden_attribute"),
    # a function the `__main__` block calls is judged when anything else can call it
    ("def helper():\n    torch.manual_seed(0)\nx = helper\nif __name__ == '__main__':\n"
     "    helper()", "forbidden_attribute"),
    ("import functools\n@functools.lru_cache\ndef helper():\n    torch.manual_seed(0)\n"
     "if __name__ == '__main__':\n    helper()", "forbidden_attribute"),
    ("def helper():\n    torch.manual_seed(0)\ndef g(h=helper):\n    return h()\n"
     "if __name__ == '__main__':\n    helper()", "forbidden_attribute"),
    ("def helper():\n    torch.manual_seed(0)\nclass M(nn.Module):\n    def forward(self, x):\n"
     "        helper()\n        return x\nif __name__ == '__main__':\n    helper()",
     "forbidden_attribute"),
])
def test_cheat_vectors_are_rejected(body, reason):
    assert verdict(body) == reason
