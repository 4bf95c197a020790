"""Count the candidate rules, the same way every time.

    python3 scripts/count_rules.py            # the working tree
    python3 scripts/count_rules.py --at REV   # any commit (files read with `git show`)

- **checks**: the places a rule refuses something — each ``StaticIssue(...)`` built in a
  rule file, and each runtime refusal in the candidate's process (``_violation(...)``
  calls, and each function of torch, Triton or the standard library the lockdown replaces:
  an assignment to an attribute of anything but ``self``).
- **deny names** / **allow names**: the strings inside the rule files' module-level
  UPPER_CASE constants (one count per distinct string per constant; a string with a space
  in it is a message, not a name). A constant whose name
  says it refuses (FORBIDDEN, BANNED, MODULE_NAMES, INTERNALS, MACHINERY) holds deny names;
  every other one (allowlists, name lists, the decorators a kernel may have) holds allow
  names.
"""

from __future__ import annotations

import argparse
import ast
import re
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DIALECTS = {
    "triton": ["evotui/dialects/triton/static_rules.py", "evotui/dialects/triton/jit_rules.py",
               "evotui/dialects/triton/kernel_rules.py", "evotui/dialects/triton/kernel_defs.py",
               "evotui/dialects/triton/scope_rules.py",
               "evotui/dialects/triton/receiver_rules.py",
               "evotui/dialects/triton/module_reach.py", "evotui/dialects/triton/ast_paths.py",
               "evotui/dialects/triton/stdlib_rules.py",
               "evotui/dialects/triton/text_rules.py", "evotui/dialects/triton/rule_names.py",
               "evotui/dialects/triton/path_rules.py",
               "evotui/dialects/triton/annotation_rules.py"],
    "cuda": ["evotui/dialects/cuda/static_rules.py", "evotui/dialects/cuda/ptx_rules.py"],
    "runtime": ["evotui/eval/lockdown.py", "evotui/eval/op_policy.py"],
}
DENY = re.compile(r"FORBIDDEN|BANNED|MODULE_NAMES|INTERNALS|MACHINERY")
CHECK_CALLS = {"StaticIssue", "_violation"}


@dataclass
class Count:
    checks: int = 0
    deny: int = 0
    allow: int = 0

    def __iadd__(self, other: Count) -> Count:
        self.checks += other.checks
        self.deny += other.deny
        self.allow += other.allow
        return self


def read(path: str, rev: str | None) -> str | None:
    if rev is None:
        file = ROOT / path
        return file.read_text() if file.is_file() else None
    shown = subprocess.run(["git", "-C", str(ROOT), "show", f"{rev}:{path}"],
                           capture_output=True, text=True)
    return shown.stdout if shown.returncode == 0 else None


def count_file(source: str, runtime: bool = False) -> Count:
    tree = ast.parse(source)
    out = Count()
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            func = node.func
            name = func.id if isinstance(func, ast.Name) else (
                func.attr if isinstance(func, ast.Attribute) else None)
            if name in CHECK_CALLS:
                out.checks += 1
        elif runtime and isinstance(node, ast.Assign) and any(
                isinstance(t, ast.Attribute) and not (isinstance(t.value, ast.Name)
                                                      and t.value.id == "self")
                for t in node.targets):
            out.checks += 1  # a harness-side replacement (`torch.from_file = _refuse`)
    for stmt in tree.body:
        if not isinstance(stmt, ast.Assign | ast.AnnAssign) or stmt.value is None:
            continue
        targets = stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]
        for target in targets:
            if not (isinstance(target, ast.Name) and target.id.lstrip("_").isupper()):
                continue
            strings = {n.value for n in ast.walk(stmt.value)
                       if isinstance(n, ast.Constant) and isinstance(n.value, str)
                       and not any(c.isspace() for c in n.value)}  # not a message
            if DENY.search(target.id):
                out.deny += len(strings)
            else:
                out.allow += len(strings)
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--at", metavar="REV", help="count at this commit (default: the working tree)")
    args = parser.parse_args(argv)
    total = Count()
    for dialect, paths in DIALECTS.items():
        sub = Count()
        for path in paths:
            source = read(path, args.at)
            if source is not None:
                sub += count_file(source, runtime=dialect == "runtime")
        total += sub
        print(f"{dialect:8} {sub.checks:4} checks  {sub.deny:4} deny names  {sub.allow:4} allow names")
    print(f"{'all':8} {total.checks:4} checks  {total.deny:4} deny names  {total.allow:4} allow names")
    return 0


if __name__ == "__main__":
    sys.exit(main())
