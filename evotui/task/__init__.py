"""A task: its file loaded (`model`), checked before a run (`preflight`), sized for the CPU
(`shapes`), its size constants read and set (`constants`), its errors (`errors`)."""
