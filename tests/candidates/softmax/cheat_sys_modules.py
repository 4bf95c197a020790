# `from triton.language.extra import modules` is sys.modules (triton does
# `from sys import modules`). The ImportFrom rule checks MODULE_NAMES and paths, not the
# names module_reach.reachable_modules() finds (the attribute rule does: `tl.extra.modules`
# is refused). check_source: None.
import torch.nn as nn
from triton.language.extra import modules as m


class ModelNew(nn.Module):
    def forward(self, x):
        m["os"].system("id > /tmp/r17_sys_modules.txt")
        return x
