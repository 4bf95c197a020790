"""Writing over every SM's shared memory before each timed call.

Shared memory is not cleared between launches: a block that lands where an earlier launch's
block ran finds that block's ``__shared__`` values still there. A kernel can keep an answer
there (a row's max and sum, tagged by the row) and skip its work when the tag matches: faster
only on values it has seen, which no static rule can tell from an honest kernel that reads
shared memory it wrote. The timer closes the class: with the L2 flush before every timed
call, one block per SM takes all the shared memory a block may have and writes over it, so
every launch starts from bytes the harness wrote.

The kernel is PTX written here (no compiler is needed: the driver builds it for the device
when a worker starts) and launched through the driver API on the timed stream, so it is
captured into the timing graphs like the flush.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

KERNEL = "evotui_scrub_shared"
PATTERN = 0xFFFFFFFF  # a NaN in every float lane

# Each thread writes 16-byte words at (tid + k * ntid) * 16 up to the dynamic size; the
# stores are volatile so that no compiler drops them as never read.
PTX = r"""
.version 7.0
.target sm_75
.address_size 64

.extern .shared .align 16 .b8 evotui_scrub_smem[];

.visible .entry evotui_scrub_shared(
    .param .u32 evotui_scrub_pattern
)
{
    .reg .pred %p<2>;
    .reg .b32 %r<10>;

    ld.param.u32 %r1, [evotui_scrub_pattern];
    mov.u32 %r2, %dynamic_smem_size;
    mov.u32 %r3, %tid.x;
    mov.u32 %r4, %ntid.x;
    shl.b32 %r5, %r3, 4;
    shl.b32 %r6, %r4, 4;
    mov.u32 %r7, evotui_scrub_smem;
$L_loop:
    add.u32 %r8, %r5, 16;
    setp.gt.u32 %p1, %r8, %r2;
    @%p1 bra $L_done;
    add.u32 %r9, %r7, %r5;
    st.volatile.shared.v4.u32 [%r9], {%r1, %r1, %r1, %r1};
    add.u32 %r5, %r5, %r6;
    bra.uni $L_loop;
$L_done:
    ret;
}
"""


@dataclass
class SharedScrub:
    """The loaded kernel and its launch: one block per SM, each with the most shared memory
    a block may opt in to (so no second block fits beside it)."""

    kernel: Any
    blocks: int
    shared_bytes: int
    max_shared_optin: int
    ordinal: int

    THREADS = 1024

    @classmethod
    def load(cls, device: Any) -> SharedScrub:
        """Load the kernel into the device's primary context (the one torch uses) and run it
        once, outside any capture (the shared-memory opt-in is set there)."""
        import torch

        from evotui.dialects.cuda import launcher

        index = torch.device(device).index
        ordinal = torch.cuda.current_device() if index is None else index
        props = torch.cuda.get_device_properties(ordinal)
        optin = int(props.shared_memory_per_block_optin)
        module = launcher.load("evotui-shared-scrub", PTX.encode() + b"\0",
                               [KERNEL], ordinal)
        scrub = cls(module.kernels[KERNEL], int(props.multi_processor_count),
                    optin - module.kernels[KERNEL].static_shared, optin, ordinal)
        scrub()
        torch.cuda.synchronize(ordinal)
        return scrub

    def __call__(self) -> None:
        """Enqueue on the device's current stream (a capture stream inside a graph capture)."""
        import torch

        from evotui.dialects.cuda import launcher

        stream = torch.cuda.current_stream(self.ordinal).cuda_stream
        launcher.launch(self.kernel, (self.blocks, 1, 1), (self.THREADS, 1, 1),
                        self.shared_bytes, stream, [("c_uint32", PATTERN)],
                        self.max_shared_optin)
