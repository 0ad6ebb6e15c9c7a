"""`workbench serve`: the judging app in browsers (aiohttp and textual-serve load only here)."""
