"""The language server: protocol handlers, params in, LSP types out."""
