"""`trainspec lsp`: the checks, fixes, documentation and completion of trainspec inside an editor.

The modules below `server` know nothing of the protocol's transport: they take a
buffer's text and return LSP values, so they are tested without a client.
pygls is imported by `server` only, which only `trainspec lsp` imports.
"""
