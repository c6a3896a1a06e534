"""One module per `trainspec` command: `register(subparsers)` adds it, `run(args, extras, parser)` runs it."""
