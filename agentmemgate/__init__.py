"""AgentMemGate toolkit: build, validate and audit speculation-contamination benchmarks."""

__version__ = "0.1.0"
