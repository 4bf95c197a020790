"""FAULT: a syntax error."""

class ModelNew(nn.Module:
    pass
