"""Writing into users' files without losing what they wrote: `migrate`, `plan --apply`, `editor`."""
