"""Parallel layouts: what a family declares (`declared`), the layouts its rules accept (`layout_search`),
`trainspec plan` (`planner`, `apply`) and `trainspec show` (`provenance`)."""
