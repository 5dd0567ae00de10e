"""Alembic migrations of the habitus store; run on open by :class:`habitus.store.Store`."""
