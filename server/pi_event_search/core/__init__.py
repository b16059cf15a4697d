"""Shared vocabulary: errors, the wire shapes, event references, authorization, times, cursors, filters."""
