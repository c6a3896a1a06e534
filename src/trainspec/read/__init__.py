"""Reading: which files a run checks and with what settings (`inputs`, `project`, `discovery`),
each file parsed into a located `Document` (`files`, one module per format named in `formats`, which
also says what editing asks of the format),
its family detected, its overrides applied."""
