"""``evotui suite``: many problems, each an ordinary run, scored with KernelBench's fast_p."""
