"""Editors: the language server (`lsp`), the schemas editors load, workspace settings."""
