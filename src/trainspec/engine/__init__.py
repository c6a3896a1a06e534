"""The checking engine: one file start to end (`pipeline`), one document through schema and rules
(`checker`), many files and project settings (`runner`), where a finding points (`placement`), what
is suppressed, sweeps."""
