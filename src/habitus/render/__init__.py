"""Rendering: the ledger files and the execution-layer block, within budgets, writing only
what habitus owns, atomically, with a backup (DESIGN.md "render")."""
