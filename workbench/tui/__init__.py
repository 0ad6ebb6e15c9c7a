"""The Textual judging app (imports textual: load it only from `workbench judge` / `demo`)."""
