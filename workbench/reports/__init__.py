"""Reports: figures from the core rendered for people (terminal text, Markdown, HTML, SVG)."""
